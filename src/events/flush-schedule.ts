/** At most one write of text deltas per run this often: batching keeps the database off the hot path. */
const FLUSH_DELAY_MS = 100;

/**
 * When a sink writes what was emitted: the first emit of a quiet stretch at once, then at most one
 * write per FLUSH_DELAY_MS — or at once when too much is held.
 */
export class FlushSchedule {
  private timer: NodeJS.Timeout | null = null;
  /** A flush is queued for the end of this turn of the event loop. */
  private queued = false;
  private lastFlushAt = 0;

  constructor(private readonly flush: () => void) {}

  /** Something was emitted; `urgent`: so much is held that it should not wait. */
  emitted(urgent: boolean): void {
    this.soon(urgent ? 0 : Math.max(0, this.lastFlushAt + FLUSH_DELAY_MS - Date.now()));
  }

  /** A flush starts now, however it was called: the next one is due FLUSH_DELAY_MS from here. */
  flushing(): void {
    this.cancel();
    this.lastFlushAt = Date.now();
  }

  /** Drops a pending timer (a flush queued for this turn still runs). */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /**
   * A flush in `delay` ms; with no delay, at the end of this turn of the event loop (a timer of 0
   * fires a millisecond later at the soonest, and the first text of an answer waits for it).
   */
  private soon(delay: number): void {
    if (this.timer) {
      if (delay > 0) return;
      this.cancel();
    }
    if (this.queued) return;
    if (delay > 0) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flush();
      }, delay);
      return;
    }
    this.queued = true;
    setImmediate(() => {
      this.queued = false;
      this.flush();
    });
  }
}
