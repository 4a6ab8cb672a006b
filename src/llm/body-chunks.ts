import type { Readable } from 'node:stream';
import { BODY_HIGH_WATER_CHUNKS as HIGH_WATER } from '../common/tuning';
import type { ReadTicks, TickReader } from './read-ticks';

/**
 * The chunks of an answer's body as an iterator, read straight off its 'data' events. A Readable's
 * own async iterator costs a 'readable' event, a read() and a nextTick per chunk; at a model's
 * pace across a thousand streams that was about 4 % of the process's time. One promise per read
 * that finds nothing waiting is all this costs, and a read takes every chunk waiting: Node's HTTP
 * parser emits each chunk of a chunked body on its own, and at a thousand streams most reads found
 * one or more waiting. A body that closes before its end, or fails, makes the next read throw.
 *
 * The body is paused for two reasons, both decided in one place (`flow`): its reader holds
 * HIGH_WATER chunks unread, or it waits for its tick (ReadTicks) — after each delivery of chunks it
 * reads nothing more until its tick comes, so that a tick hands over a few bodies' chunks, not a
 * thousand. The pause is the body's own `pause()`: what arrives meanwhile waits in the body's and
 * the socket's buffers, and once those fill (64 KiB each by default) Node's HTTP client stops
 * reading the socket, and TCP slows the model. Once only the body's end is left (`readNow`), or the
 * body is over, it no longer waits for ticks.
 */
export class BodyChunks implements AsyncIterator<Uint8Array>, TickReader {
  private readonly held: Buffer[] = [];
  private ended = false;
  private failure: Error | null = null;
  /** Waits for its tick (ReadTicks) since its last delivery. */
  private waiting = false;
  /** Reads without waiting for ticks: only the end is left, or the body is over. */
  private free = false;
  private waiter: {
    resolve: (read: IteratorResult<Uint8Array>) => void;
    reject: (error: Error) => void;
  } | null = null;

  constructor(
    private readonly body: Readable,
    /** The process's queue of model reads (LlmModule), shared by every body. */
    private readonly ticks: ReadTicks,
  ) {
    body.on('data', this.onData);
    body.once('end', this.onEnd);
    body.once('error', this.onError);
    body.once('close', this.onClose);
  }

  /** Everything that arrived since the last read, as one chunk (a busy process finds several waiting). */
  next(): Promise<IteratorResult<Uint8Array>> {
    const chunk = this.held.length > 1 ? Buffer.concat(this.held.splice(0)) : this.held.shift();
    if (chunk !== undefined) {
      this.flow();
      return Promise.resolve({ done: false, value: chunk });
    }
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** Only the body's end is left to come (the model said `[DONE]`): it reads without waiting for its tick. */
  readNow(): void {
    this.free = true;
    this.ticks.release(this);
  }

  /** Called by ReadTicks: this body may read again. */
  tickCame(): void {
    this.waiting = false;
    this.flow();
  }

  /**
   * The one place the body is paused or resumed: it flows unless it waits for its tick or its
   * reader holds HIGH_WATER chunks unread.
   */
  private readonly flow = (): void => {
    if (this.waiting || this.held.length >= HIGH_WATER) {
      if (!this.body.isPaused()) this.body.pause();
    } else if (this.body.isPaused()) {
      this.body.resume();
    }
  };

  private readonly onData = (chunk: Buffer): void => {
    if (!this.waiting && !this.free) {
      // The first chunk of a delivery: the body waits for its next tick, paused once this delivery
      // is over (a microtask runs after it) — the chunks of one read of the socket, which Node's
      // HTTP parser emits one by one, all come through now rather than one a tick.
      this.waiting = true;
      this.ticks.wait(this);
      queueMicrotask(this.flow);
    }
    const waiter = this.waiter;
    if (waiter !== null) {
      this.waiter = null;
      waiter.resolve({ done: false, value: chunk });
      return;
    }
    this.held.push(chunk);
    if (this.held.length >= HIGH_WATER) this.flow();
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

  /** The body is over: it leaves the queue of ticks, and a read waiting on nothing wakes. */
  private settle(): void {
    this.free = true;
    this.ticks.release(this);
    const waiter = this.waiter;
    if (waiter === null) return;
    this.waiter = null;
    if (this.failure !== null) waiter.reject(this.failure);
    else waiter.resolve({ done: true, value: undefined });
  }
}
