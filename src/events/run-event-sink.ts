import type { EntityManager } from 'typeorm';
import { serializeEvent, type RunEventBody, type SerializedEvent } from './run-events';
import type { RunChanges, RunStore, SqlStatement } from '../store/run-store.service';

/** How long text deltas may wait before they are written: batching keeps the database off the hot path. */
const FLUSH_DELAY_MS = 100;
const FLUSH_MAX_EVENTS = 256;

/**
 * The events of one run while this process drives it. It numbers them, keeps them in memory for
 * the streams of this process, and writes them to the event log through one ordered chain of writes,
 * so the log is always a gap-free prefix of what was numbered.
 *
 * `emit` is for events that change no state (text, tool output): they are visible at once and
 * written in batches. `commit` is for events that go with a state change: they are written in the
 * same transaction as the change and become visible only after it commits — so the store is never
 * behind what a stream has said.
 */
export class RunEventSink {
  readonly firstSeq: number;
  private readonly history: SerializedEvent[] = [];
  private stored = 0;
  private visible = 0;
  private readonly heldFrom = new Set<number>();
  private chain: Promise<void> = Promise.resolve();
  private flushTimer: NodeJS.Timeout | null = null;
  private waiters: (() => void)[] = [];
  private closedState = false;
  private wakeScheduled = false;

  constructor(
    readonly runId: string,
    lastSeq: number,
    private readonly store: RunStore,
    private readonly onWriteError: (err: Error) => void,
    /** Events already in the log that this process's streams should still see from memory. */
    alreadyStored: readonly SerializedEvent[] = [],
  ) {
    this.firstSeq = lastSeq + 1;
    this.history.push(...alreadyStored);
    this.stored = this.visible = alreadyStored.length;
  }

  get lastSeq(): number {
    return this.firstSeq + this.history.length - 1;
  }

  get closed(): boolean {
    return this.closedState;
  }

  emit(body: RunEventBody): void {
    this.push(body);
    if (this.heldFrom.size === 0) this.publish();
    if (this.history.length - this.stored >= FLUSH_MAX_EVENTS) this.flushSoon(0);
    else this.flushSoon(FLUSH_DELAY_MS);
  }

  /**
   * Writes `bodies` and whatever `work` changes in one transaction (after every earlier event), then
   * shows the events to the streams. Resolves when all of it is stored.
   */
  commit(bodies: RunEventBody[], work?: (tx: EntityManager) => Promise<void>): Promise<void> {
    return this.commitVia(bodies, (events) =>
      this.store.transaction(async (tx) => {
        if (work) await work(tx);
        await this.store.appendEvents(tx, this.runId, events);
      }),
    );
  }

  /**
   * Like `commit`, for changes that are plain statements: they, the run's `changes` and the events
   * go to the database as one atomic statement — one round trip (the loop's hot path).
   */
  commitWrites(bodies: RunEventBody[], writes: SqlStatement[], changes: RunChanges = {}): Promise<void> {
    return this.commitVia(bodies, (events) =>
      this.store.writeWithEvents(this.store.queryable, this.runId, events, writes, changes),
    );
  }

  private async commitVia(
    bodies: RunEventBody[],
    write: (events: SerializedEvent[]) => Promise<void>,
  ): Promise<void> {
    const from = this.history.length;
    this.heldFrom.add(from);
    for (const body of bodies) this.push(body);
    const upTo = this.history.length;
    try {
      await this.enqueue(async () => {
        await write(this.history.slice(this.stored, upTo));
        this.stored = Math.max(this.stored, upTo);
      });
    } finally {
      this.heldFrom.delete(from);
      this.publish();
    }
  }

  /** Writes everything emitted so far. */
  flush(): Promise<void> {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    const upTo = this.history.length;
    if (upTo <= this.stored) return this.chain;
    return this.enqueue(async () => {
      if (upTo <= this.stored) return;
      await this.store.appendEvents(this.store.queryable, this.runId, this.history.slice(this.stored, upTo));
      this.stored = upTo;
    });
  }

  /** Events after `seq` that streams may see now. */
  visibleAfter(seq: number): SerializedEvent[] {
    const start = Math.max(0, seq - this.firstSeq + 1);
    return start >= this.visible ? [] : this.history.slice(start, this.visible);
  }

  /** Resolves at the next change (new events or close), or when `signal` aborts. */
  changed(signal: AbortSignal): Promise<void> {
    if (this.closedState || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.waiters.push(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Stops taking events once everything is written; streams then follow the run from the log. */
  async close(): Promise<void> {
    await this.flush().catch(() => undefined);
    this.closedState = true;
    this.wake();
  }

  private push(body: RunEventBody): void {
    this.history.push(serializeEvent(this.runId, this.firstSeq + this.history.length, body));
  }

  private publish(): void {
    const held = this.heldFrom.size === 0 ? this.history.length : Math.min(...this.heldFrom);
    if (held > this.visible) {
      this.visible = held;
      // Streams wake once per turn of the event loop, so every event of one network read leaves in
      // one socket write instead of one write each.
      if (!this.wakeScheduled) {
        this.wakeScheduled = true;
        setImmediate(() => {
          this.wakeScheduled = false;
          this.wake();
        });
      }
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private flushSoon(delay: number): void {
    if (this.flushTimer) {
      if (delay > 0) return;
      clearTimeout(this.flushTimer);
    }
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.flush().catch(() => undefined);
    }, delay);
  }

  private enqueue(write: () => Promise<void>): Promise<void> {
    const next = this.chain.then(write);
    this.chain = next.catch((err: Error) => this.onWriteError(err));
    return next;
  }
}
