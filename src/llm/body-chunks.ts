import type { Readable } from 'node:stream';
import { BODY_HIGH_WATER_CHUNKS as HIGH_WATER } from '../common/tuning';

/**
 * The chunks of an answer's body as an iterator, read straight off its 'data' events. A Readable's
 * own async iterator costs a 'readable' event, a read() and a nextTick per chunk; at a model's
 * pace across a thousand streams that was about 4 % of the process's time. One promise per read
 * that finds nothing waiting is all this costs, and a read takes every chunk waiting: Node's HTTP
 * parser emits each chunk of a chunked body on its own, and at a thousand streams most reads found
 * one or more waiting. A body that closes before its end, or fails, makes the next read throw.
 *
 * While its reader holds HIGH_WATER chunks unread the body is paused (its own `pause()`): what
 * arrives meanwhile waits in the body's and the socket's buffers, and once those fill Node's HTTP
 * client stops reading the socket and TCP slows the model.
 *
 * (Bodies used to be paused after every delivery too, to let only a few read per tick. With
 * `pause()` — the public way; the native handle's readStop is not — Node keeps reading into those
 * buffers, and at 1,000 streams that bound cost 330–390 MiB of RSS and 8–9 s of total p50 for a
 * loop delay p99 within the noise (45.6–48.5 against 48.8–52.2 ms without, `node bench/run.mjs
 * --only=capacity`, two pairs), so it went: docs/performance.md.)
 */
export class BodyChunks implements AsyncIterator<Uint8Array> {
  private readonly held: Buffer[] = [];
  private ended = false;
  private failure: Error | null = null;
  private waiter: {
    resolve: (read: IteratorResult<Uint8Array>) => void;
    reject: (error: Error) => void;
  } | null = null;

  constructor(private readonly body: Readable) {
    body.on('data', this.onData);
    body.once('end', this.onEnd);
    body.once('error', this.onError);
    body.once('close', this.onClose);
  }

  /** Everything that arrived since the last read, as one chunk (a busy process finds several waiting). */
  next(): Promise<IteratorResult<Uint8Array>> {
    const chunk = this.held.length > 1 ? Buffer.concat(this.held.splice(0)) : this.held.shift();
    if (chunk !== undefined) {
      if (this.body.isPaused()) this.body.resume();
      return Promise.resolve({ done: false, value: chunk });
    }
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  private readonly onData = (chunk: Buffer): void => {
    const waiter = this.waiter;
    if (waiter !== null) {
      this.waiter = null;
      waiter.resolve({ done: false, value: chunk });
      return;
    }
    this.held.push(chunk);
    if (this.held.length >= HIGH_WATER && !this.body.isPaused()) this.body.pause();
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

  /** The body is over: a read waiting on nothing wakes. */
  private settle(): void {
    const waiter = this.waiter;
    if (waiter === null) return;
    this.waiter = null;
    if (this.failure !== null) waiter.reject(this.failure);
    else waiter.resolve({ done: true, value: undefined });
  }
}
