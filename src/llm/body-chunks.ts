import type { IncomingMessage } from 'node:http';
import { modelReads } from './read-ticks';

/** Chunks held unread before the socket is paused (a model sends small chunks, a few per read). */
const HIGH_WATER = 16;

/**
 * The chunks of an answer's body as an iterator, read straight off its 'data' events. A Readable's
 * own async iterator costs a 'readable' event, a read() and a nextTick per chunk; at a model's
 * pace across a thousand streams that was about 4 % of the process's time. One promise per read
 * that finds nothing waiting is all this costs, and a read takes every chunk waiting: Node's HTTP
 * parser emits each chunk of a chunked body on its own, and at a thousand streams most reads found
 * one or more waiting. A body that closes before its end, or fails, makes the next read throw; the
 * socket is paused while HIGH_WATER chunks wait unread. After each of its reads the socket waits
 * for its tick to read again (ReadTicks), and once the body is over it reads on at once.
 */
export class BodyChunks implements AsyncIterator<Uint8Array> {
  private readonly held: Buffer[] = [];
  private ended = false;
  private failure: Error | null = null;
  private waiter: {
    resolve: (read: IteratorResult<Uint8Array>) => void;
    reject: (error: Error) => void;
  } | null = null;

  constructor(private readonly body: IncomingMessage) {
    body.on('data', this.onData);
    body.once('end', this.onEnd);
    body.once('error', this.onError);
    body.once('close', this.onClose);
  }

  /** Everything that arrived since the last read, as one chunk (a busy process finds several waiting). */
  next(): Promise<IteratorResult<Uint8Array>> {
    const chunk = this.held.length > 1 ? Buffer.concat(this.held.splice(0)) : this.held.shift();
    if (chunk !== undefined) {
      if (this.held.length < HIGH_WATER && this.body.isPaused()) this.body.resume();
      return Promise.resolve({ done: false, value: chunk });
    }
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** Only the body's end is left to come (the model said `[DONE]`): its socket reads without waiting its tick. */
  readNow(): void {
    modelReads.release(this.body.socket);
  }

  private readonly onData = (chunk: Buffer): void => {
    // The first chunk of a read holds the socket; the rest of that read's chunks follow here anyway.
    modelReads.hold(this.body.socket);
    const waiter = this.waiter;
    if (waiter !== null) {
      this.waiter = null;
      waiter.resolve({ done: false, value: chunk });
      return;
    }
    this.held.push(chunk);
    if (this.held.length >= HIGH_WATER) this.body.pause();
  };

  private readonly onEnd = (): void => {
    this.ended = true;
    this.settle();
  };

  private readonly onError = (error: Error): void => {
    this.failure ??= error;
    this.settle();
  };

  private readonly onClose = (): void => {
    if (!this.ended) this.failure ??= new Error('the model upstream closed the body before its end');
    this.settle();
  };

  /** Wakes a read waiting on nothing: the body is over. */
  private settle(): void {
    modelReads.release(this.body.socket);
    const waiter = this.waiter;
    if (waiter === null) return;
    this.waiter = null;
    if (this.failure !== null) waiter.reject(this.failure);
    else waiter.resolve({ done: true, value: undefined });
  }
}
