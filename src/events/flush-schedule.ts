import { FLUSH_DELAY_MS } from '../common/tuning';

/**
 * When a sink writes what was emitted: the first emit of a quiet stretch at once, then at most one
 * write per FLUSH_DELAY_MS — or at once when too much is held.
 *
 * Every flush opens a window of FLUSH_DELAY_MS; what is emitted inside it waits for its end. The
 * window is one timer for the sink's whole life, re-armed by `refresh()` at each flush: a streaming
 * run flushes ten times a second, and with a thousand of them a new timer per flush was ten
 * thousand timers a second for the garbage collector to copy.
 */
export class FlushSchedule {
  private window: NodeJS.Timeout | null = null;
  /** A flush started less than FLUSH_DELAY_MS ago. */
  private windowOpen = false;
  /** Something was emitted inside the open window: flush when it closes. */
  private held = false;
  /** A flush is queued for the end of this tick of the event loop. */
  private queued = false;

  constructor(private readonly flush: () => void) {}

  /** Something was emitted; `urgent`: so much is held that it should not wait. */
  emitted(urgent: boolean): void {
    if (this.windowOpen && !urgent) {
      this.held = true;
      return;
    }
    // At the end of this tick rather than by a timer of 0, which fires a millisecond later at the
    // soonest: the first text of an answer waits for it.
    if (this.queued) return;
    this.queued = true;
    setImmediate(this.flushNow);
  }

  /** A flush starts now, however it was called: the next one is due FLUSH_DELAY_MS from here. */
  flushing(): void {
    this.held = false;
    this.windowOpen = true;
    if (this.window === null) this.window = setTimeout(this.windowCloses, FLUSH_DELAY_MS);
    else this.window.refresh();
  }

  /** Nothing more is flushed by this schedule (a flush queued for this tick still runs). */
  cancel(): void {
    if (this.window) clearTimeout(this.window);
    this.window = null;
    this.windowOpen = false;
    this.held = false;
  }

  private readonly flushNow = (): void => {
    this.queued = false;
    this.flush();
  };

  private readonly windowCloses = (): void => {
    this.windowOpen = false;
    if (!this.held) return;
    this.held = false;
    this.flush();
  };
}
