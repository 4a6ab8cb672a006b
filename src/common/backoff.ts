/**
 * The longest a periodic task that keeps failing waits before trying again. While the database is
 * gone every task that reads it fails at once; without a growing wait the server went on trying at
 * each task's own period (every second for most), each try a connection attempt and a log line.
 * Five seconds: a task is back within that of the database's return, and an outage costs each task
 * a try every 5 s.
 */
export const RETRY_MAX_MS = 5_000;

/**
 * How long a periodic task waits before its next try: its period while it succeeds; after failures
 * in a row the period doubled for each (from at least 500 ms), up to `maxMs`; the period again after
 * the first success.
 */
export class Backoff {
  private failures = 0;

  constructor(
    private readonly periodMs: number,
    private readonly maxMs = Math.max(periodMs, RETRY_MAX_MS),
  ) {}

  /** The wait before the next try, as things stand. */
  get delayMs(): number {
    if (this.failures === 0) return this.periodMs;
    return Math.min(Math.max(this.periodMs, 500) * 2 ** this.failures, this.maxMs);
  }

  /** A try failed: the next waits longer (up to the cap). Answers that wait. */
  failed(): number {
    this.failures = Math.min(this.failures + 1, 32);
    return this.delayMs;
  }

  /** A try succeeded: back to the period. */
  succeeded(): void {
    this.failures = 0;
  }
}

/** Runs `fn` after `ms`; answers how to cancel it. A test passes a fake one. */
export type Schedule = (fn: () => void, ms: number) => () => void;

/** setTimeout, unref'd: a periodic task never keeps the process alive. */
export const realSchedule: Schedule = (fn, ms) => {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

/**
 * A task run every `periodMs` — one try at a time, the next `periodMs` after the last began (at
 * once when it took longer) — that backs off (Backoff) while it fails, and is back at its period
 * after its first success. `onFailure` hears each failure (to log it).
 */
export class PeriodicTask {
  private readonly backoff: Backoff;
  private readonly schedule: Schedule;
  private readonly now: () => number;
  private cancel: (() => void) | null = null;
  private stopped = false;

  constructor(
    private readonly task: () => Promise<void>,
    periodMs: number,
    private readonly onFailure: (err: unknown) => void,
    options: { maxMs?: number; schedule?: Schedule; now?: () => number } = {},
  ) {
    this.backoff = new Backoff(periodMs, options.maxMs);
    this.schedule = options.schedule ?? realSchedule;
    this.now = options.now ?? Date.now;
  }

  /** Starts it: the first try now (`now`) or after one period. */
  start(now = false): void {
    this.next(now ? 0 : this.backoff.delayMs);
  }

  stop(): void {
    this.stopped = true;
    this.cancel?.();
    this.cancel = null;
  }

  private next(ms: number): void {
    if (this.stopped) return;
    this.cancel = this.schedule(() => void this.run(), ms);
  }

  private async run(): Promise<void> {
    const began = this.now();
    try {
      await this.task();
      this.backoff.succeeded();
    } catch (err) {
      this.backoff.failed();
      this.onFailure(err);
    }
    this.next(Math.max(0, this.backoff.delayMs - (this.now() - began)));
  }
}
