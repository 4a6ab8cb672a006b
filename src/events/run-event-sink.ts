import { serializeEvent, type RunEventBody, type SerializedEvent } from './run-events';
import { FlushSchedule } from './flush-schedule';
import { retryWhileLeased, type RunLease } from './run-lease';
import type { JournalAt } from '../store/run-journal.service';
import type { RunStore } from '../store/run-store.service';
import { isRunReleased, LeaseLost, type StoreUnavailable } from '../store/store-errors';
import { FLUSH_MAX_EVENTS, FLUSH_MAX_TEXT_CHARS, SINK_WINDOW_EVENTS as SINK_WINDOW } from '../common/tuning';

/**
 * The events of one run while this process drives it. It numbers them and writes them to the event
 * log through one ordered chain of writes; streams see an event only once the write holding it has
 * committed, so the log is always a gap-free prefix and no stream says what the store lacks.
 *
 * `emit` is for events that change no state (text, tool output): they are written in batches, when
 * the FlushSchedule says — the first of a quiet stretch at once, then at most one write per 100 ms.
 * The text deltas that arrive between two writes become one `text` event when the write takes them:
 * no stream ever saw them apart, so nothing changes for a client but the size of a piece, while the
 * log, the streams and the database carry one event per write instead of one per upstream chunk.
 * `record` is for events that go with a state change: the run's journal writes them with the
 * change, after every earlier event.
 *
 * A write the database cannot take now is retried while the run's lease lasts. A write it refuses
 * fails: its events (and those numbered after them, never shown to anyone) are dropped and their
 * numbers given to the next events. When the lease is gone — run out during an outage, or taken by
 * another process — the sink is released: nothing more is written or shown, and its streams end
 * without a final event.
 */
export class RunEventSink {
  /** Numbered events from `baseSeq` on: the unstored ones and a window of stored ones. */
  private events: SerializedEvent[] = [];
  /** Text emitted since the last event was numbered; numbered as one `text` event by the next write. */
  private pendingText = '';
  private baseSeq: number;
  private storedSeq: number;
  private nextSeq: number;
  private chain: Promise<void> = Promise.resolve();
  /** Moves on when a write fails: writes queued behind it carried events that are now dropped. */
  private generation = 0;
  private failure: unknown = null;
  private releasedBy: LeaseLost | StoreUnavailable | null = null;
  private readonly flushes = new FlushSchedule(() => void this.flush());
  private waiters: (() => void)[] = [];
  /** A wake of this sink's streams is on its way (see `publish`). */
  private wakeScheduled = false;
  private closedState = false;

  constructor(
    readonly runId: string,
    lastSeq: number,
    private readonly store: RunStore,
    private readonly lease: RunLease,
    /** Told about every write that failed for good (the run must fail) or released the run. */
    private readonly onWriteError: (err: unknown) => void,
    /** Events already in the log that this process's streams should still see from memory. */
    alreadyStored: readonly SerializedEvent[] = [],
  ) {
    this.events.push(...alreadyStored);
    this.baseSeq = lastSeq + 1;
    this.storedSeq = lastSeq + alreadyStored.length;
    this.nextSeq = this.storedSeq + 1;
  }

  /** The last number given to an event (stored or not). */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /** The last event stored, and so visible to streams. */
  get visibleSeq(): number {
    return this.storedSeq;
  }

  /** Events held in memory now (the unstored ones and the recent window). */
  get heldEvents(): number {
    return this.events.length;
  }

  get closed(): boolean {
    return this.closedState;
  }

  /** Why this process let the run go, or null while it still drives it. */
  get released(): LeaseLost | StoreUnavailable | null {
    return this.releasedBy;
  }

  emit(body: RunEventBody): void {
    if (this.closedState) return;
    if (body.type === 'text') {
      this.pendingText += body.delta;
    } else {
      this.numberPendingText();
      this.push(body);
    }
    this.flushes.emitted(
      this.nextSeq - 1 - this.storedSeq >= FLUSH_MAX_EVENTS ||
        this.pendingText.length >= FLUSH_MAX_TEXT_CHARS,
    );
  }

  /**
   * Events that go with a state change, written by a verb of the run's journal (RunJournal): this
   * sink numbers `bodies` after every earlier event, `write` stores them with the change under this
   * process's lease (one statement on the hot path), and the sink shows them once it has committed.
   */
  record(bodies: RunEventBody[], write: (at: JournalAt) => Promise<unknown>): Promise<void> {
    return this.commitVia(bodies, (events) =>
      write({ runId: this.runId, events, leaseOwner: this.lease.owner }),
    );
  }

  /** Writes everything emitted so far. Never rejects: a failure is reported through `onWriteError`. */
  flush(): Promise<void> {
    this.flushes.flushing();
    if (this.releasedBy) return this.chain;
    this.numberPendingText();
    if (this.nextSeq - 1 <= this.storedSeq) return this.chain;
    return this.enqueue(
      this.nextSeq - 1,
      (events) => this.store.appendBatched(this.runId, events, this.lease.owner),
      false,
      // Its failure went to writeFailed (and onWriteError) inside enqueue: nothing is left to handle.
    ).catch(() => undefined);
  }

  /** Runs `work` (a read or write of this run) as `retryWhileLeased` does, while this run's lease lasts. */
  retrying<T>(work: () => Promise<T>): Promise<T> {
    return retryWhileLeased(this.lease, this.runId, () => work());
  }

  /** Stored events after `seq` that streams may see now; null when `seq` is behind the window (read the log). */
  visibleAfter(seq: number): SerializedEvent[] | null {
    if (seq + 1 < this.baseSeq) return null;
    const start = seq + 1 - this.baseSeq;
    const end = this.storedSeq + 1 - this.baseSeq;
    return start >= end ? [] : this.events.slice(start, end);
  }

  /** Whether a stream that has everything up to `seq` can go on from memory. */
  holdsAfter(seq: number): boolean {
    return seq + 1 >= this.baseSeq;
  }

  /** Calls `wake` once, at the next change (new events or close); at once if closed already. */
  onChange(wake: () => void): void {
    if (this.closedState) wake();
    else this.waiters.push(wake);
  }

  /** Stops taking events once everything is written; streams then follow the run from the log. */
  async close(): Promise<void> {
    await this.flush();
    this.closedState = true;
    this.wake();
  }

  private commitVia(
    bodies: RunEventBody[],
    write: (events: SerializedEvent[]) => Promise<unknown>,
  ): Promise<void> {
    if (this.releasedBy) return Promise.reject(this.releasedBy);
    this.numberPendingText();
    for (const body of bodies) this.push(body);
    return this.enqueue(this.nextSeq - 1, write, true);
  }

  private numberPendingText(): void {
    if (this.pendingText === '') return;
    const delta = this.pendingText;
    this.pendingText = '';
    this.push({ type: 'text', delta });
  }

  private push(body: RunEventBody): void {
    this.events.push(serializeEvent(this.runId, this.nextSeq, body));
    this.nextSeq++;
  }

  /**
   * Queues a write of the unstored events up to `upTo` behind every earlier write. `always`: run it
   * even with no events to write (it carries other changes).
   */
  private enqueue(
    upTo: number,
    write: (events: SerializedEvent[]) => Promise<unknown>,
    always: boolean,
  ): Promise<void> {
    const generation = this.generation;
    const next = this.chain.then(async () => {
      if (this.releasedBy) throw this.releasedBy;
      if (generation !== this.generation) throw this.failure;
      if (!always && upTo <= this.storedSeq) return;
      const from = this.storedSeq;
      const events = this.events.slice(from + 1 - this.baseSeq, upTo + 1 - this.baseSeq);
      try {
        // After a dropped connection the write may have landed: a retry first asks.
        await retryWhileLeased(this.lease, this.runId, async (retry) => {
          if (retry && events.length > 0 && (await this.landed(upTo))) return;
          await write(events);
        });
      } catch (err) {
        this.writeFailed(err);
        throw err;
      }
      this.storedSeq = Math.max(this.storedSeq, upTo);
      this.publish();
    });
    // The chain only orders writes: a failure is `next`'s caller's, and writeFailed has recorded it
    // (the writes queued behind it see it through `generation`), so the chain itself goes on.
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** After a dropped connection: whether the write holding events up to `upTo` committed after all. */
  private async landed(upTo: number): Promise<boolean> {
    const state = await this.store.writeState(this.runId);
    if (state && state.lastSeq >= upTo) return true;
    if (!state || state.leaseOwner !== this.lease.owner) throw new LeaseLost(this.runId);
    return false;
  }

  private writeFailed(err: unknown): void {
    // Nothing unstored was ever shown: dropping it and reusing its numbers reuses no number a stream saw.
    this.events.length = this.storedSeq + 1 - this.baseSeq;
    this.nextSeq = this.storedSeq + 1;
    if (isRunReleased(err)) {
      this.releasedBy ??= err;
      this.pendingText = '';
      this.flushes.cancel();
      this.closedState = true;
      this.wake();
    } else {
      this.generation++;
      this.failure = err;
    }
    this.onWriteError(err);
  }

  private publish(): void {
    // Keep a window of stored events; drop older ones in chunks so that trimming stays cheap.
    const dropUpTo = this.storedSeq - SINK_WINDOW;
    if (dropUpTo - this.baseSeq + 1 >= SINK_WINDOW) {
      this.events.splice(0, dropUpTo - this.baseSeq + 1);
      this.baseSeq = dropUpTo + 1;
    }
    // Woken in the next tick, once for whatever this tick stored: every event of one network read
    // leaves in one socket write instead of one each.
    if (!this.wakeScheduled) {
      this.wakeScheduled = true;
      setImmediate(this.wakeStreams);
    }
  }

  private readonly wakeStreams = (): void => {
    this.wakeScheduled = false;
    this.wake();
  };

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
