import { Ticks } from '../common/ticks';

/** A reader that stopped after a read and waits for its tick (BodyChunks): told when it comes. */
export interface TickReader {
  tickCame(): void;
}

/**
 * The model's answers, read a few per tick. Node reads every socket with data waiting in each tick
 * of its event loop; with a thousand answers streaming, a thousand bodies each handed their chunks
 * to the SSE parser, the normaliser and the run's events in the same tick, and a tick took 34–45 ms
 * (p50) while every timer, request and database answer of the process waited behind it. Here a
 * body stops after a read (BodyChunks pauses it) and `wait`s for its tick: `perTick` bodies
 * (MODEL_READS_PER_TICK, src/common/tuning.ts, with its measurements) read again each tick, in the
 * order they stopped. With a few answers streaming, every body reads again in the next tick.
 *
 * One per process (LlmModule; the event loop the bodies share is one), handed to each provider that
 * reads bodies and by it to each BodyChunks; a test makes its own. `tickCame` must not throw: it
 * runs from `setImmediate`.
 */
export class ReadTicks {
  private readonly queue: Ticks<TickReader>;

  constructor(perTick: number) {
    this.queue = new Ticks(perTick, (reader) => reader.tickCame());
  }

  /** `reader` stopped after a read: its tick comes after those that stopped before it. */
  wait(reader: TickReader): void {
    this.queue.add(reader);
  }

  /** `reader` reads now, ahead of its tick (its answer is nearly over); nothing if it was not waiting. */
  release(reader: TickReader): void {
    if (this.queue.delete(reader)) reader.tickCame();
  }
}
