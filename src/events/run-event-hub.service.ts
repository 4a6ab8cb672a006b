import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AbortableWaits } from '../common/abortable-waits';
import { PgNotifications } from '../persistence/pg-notifications.service';
import { RunEventSink } from './run-event-sink';
import { isTerminalEvent } from './run-events';
import { RUN_EVENTS_CHANNEL, RunStore, type EventRecord } from '../store/run-store.service';

const PAGE = 500;
/** A follower re-reads the log at least this often even without a notice (a lost notice costs no more). */
const SAFETY_POLL_MS = 1000;

/**
 * Where streams get a run's events: from the sink in memory while this process drives the run, and
 * otherwise from the event log, woken by PostgreSQL notices from whichever process drives it.
 * One mechanism for the first stream, a reconnect, a second follower and another replica.
 */
@Injectable()
export class RunEventHub implements OnModuleInit {
  private readonly sinks = new Map<string, RunEventSink>();
  private readonly wakers = new Map<string, Set<() => void>>();
  private readonly followers = new Map<string, number>();

  constructor(
    private readonly store: RunStore,
    private readonly notifications: PgNotifications,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.notifications.listen(RUN_EVENTS_CHANNEL, (payload) =>
      this.wake(payload.slice(0, payload.indexOf(' '))),
    );
  }

  /** Makes `sink` the live source of its run in this process. */
  attach(sink: RunEventSink): void {
    this.sinks.set(sink.runId, sink);
    this.wake(sink.runId);
  }

  detach(sink: RunEventSink): void {
    if (this.sinks.get(sink.runId) === sink) this.sinks.delete(sink.runId);
    this.wake(sink.runId);
  }

  /** Open streams of the run in this process. */
  followerCount(runId: string): number {
    return this.followers.get(runId) ?? 0;
  }

  /**
   * Every event of the run after `after`, in order, without gaps or repeats, then live ones until
   * the run's `done` or `error`. Ends early when `signal` aborts.
   */
  async *follow(runId: string, after: number, signal: AbortSignal): AsyncGenerator<EventRecord[]> {
    this.followers.set(runId, this.followerCount(runId) + 1);
    const waits = new AbortableWaits(signal);
    try {
      let last = after;
      while (!signal.aborted) {
        const sink = this.sinks.get(runId);
        // This process let the run go (its lease ran out while the store was down, or another
        // process took it): end without a final event; a reconnect reads the stored truth.
        if (sink?.released) return;
        // A closed sink (its run went to wait or ended) has written everything: read the log instead.
        if (sink && !sink.closed && sink.holdsAfter(last)) {
          for (;;) {
            const batch = sink.visibleAfter(last);
            if (batch === null) break; // fell behind the sink's window: catch up from the log
            if (batch.length > 0) {
              const end = batch.findIndex((e) => isTerminalEvent(e.type));
              yield end === -1 ? batch : batch.slice(0, end + 1);
              if (end !== -1) return;
              last = batch[batch.length - 1].seq;
              continue;
            }
            if (sink.closed || signal.aborted) break;
            await waits.next((wake) => sink.onChange(wake));
          }
          continue;
        }
        const woken = this.nextWake(runId, signal);
        let page: EventRecord[];
        try {
          page = contiguous(await this.store.eventsAfter(runId, last, PAGE), last);
        } catch {
          // The store cannot be read (it is down): end the stream without a final event rather
          // than say anything unstored; the client reconnects and reads what was stored.
          return;
        }
        if (page.length > 0) {
          const end = page.findIndex((e) => isTerminalEvent(e.type));
          yield end === -1 ? page : page.slice(0, end + 1);
          if (end !== -1) return;
          last = page[page.length - 1].seq;
          const live = this.sinks.get(runId);
          if (page.length === PAGE || (live && !live.closed && live.holdsAfter(last))) continue;
        } else if (await this.nothingMoreAfter(runId, last).catch(() => true)) {
          // The run ended (or is gone) and the client already has every event up to its end.
          return;
        }
        await woken;
      }
    } finally {
      waits.dispose();
      const n = this.followerCount(runId) - 1;
      if (n > 0) this.followers.set(runId, n);
      else this.followers.delete(runId);
    }
  }

  private async nothingMoreAfter(runId: string, last: number): Promise<boolean> {
    const run = await this.store.findRun(runId);
    return (
      run === null ||
      (run.status !== 'queued' &&
        run.status !== 'running' &&
        run.status !== 'requires_action' &&
        last >= run.lastSeq)
    );
  }

  private nextWake(runId: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let set = this.wakers.get(runId);
      if (!set) this.wakers.set(runId, (set = new Set()));
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        set.delete(done);
        if (set.size === 0 && this.wakers.get(runId) === set) this.wakers.delete(runId);
        resolve();
      };
      const timer = setTimeout(done, SAFETY_POLL_MS);
      signal.addEventListener('abort', done, { once: true });
      set.add(done);
    });
  }

  private wake(runId: string): void {
    const set = this.wakers.get(runId);
    if (set) for (const w of [...set]) w();
  }
}

/** The events that directly follow `last`: a later one whose predecessor is not stored yet waits. */
function contiguous(events: EventRecord[], last: number): EventRecord[] {
  let n = 0;
  while (n < events.length && events[n].seq === last + n + 1) n++;
  return n === events.length ? events : events.slice(0, n);
}
