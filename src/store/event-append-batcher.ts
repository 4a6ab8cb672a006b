import { isStoreUnavailable, LeaseLost } from './store-errors';
import type { EventRecord } from './event-record';
import { GroupCommit, type Pending } from './group-commit';
import type { Queryable } from './store-sql';

/** One run's events for the next shared write. */
interface Append {
  runId: string;
  leaseOwner: string;
  events: readonly EventRecord[];
}

/**
 * The text flushes of every run this process drives, written together (group commit): while one
 * write is in flight the next flushes wait, then leave as one statement — the events of all those
 * runs, each run's `last_seq` and its notice. At low load a flush leaves at once, alone; at a
 * thousand streams PostgreSQL commits a few statements per 100 ms instead of one per run.
 *
 * Each run's rows land only while that run is leased to the process that sent them (the same guard
 * as RunStore.writeWithEvents, decided per run): a run whose lease is gone gets LeaseLost and the
 * others are written. A run's sink sends one flush at a time, so a batch holds at most one per run.
 */
export class EventAppendBatcher extends GroupCommit<Append, void> {
  constructor(
    private readonly q: Queryable,
    private readonly channel: string,
    /** The write of one run alone: a batch that failed is tried again run by run, so one run's error stays its own. */
    private readonly writeAlone: (
      runId: string,
      events: readonly EventRecord[],
      leaseOwner: string,
    ) => Promise<unknown>,
  ) {
    super();
  }

  append(runId: string, events: readonly EventRecord[], leaseOwner: string): Promise<void> {
    return this.add({ runId, leaseOwner, events });
  }

  protected alone({ item: a, resolve, reject }: Pending<Append, void>): Promise<void> {
    return this.writeAlone(a.runId, a.events, a.leaseOwner).then(() => resolve(), reject);
  }

  protected async together(batch: Pending<Append, void>[]): Promise<void> {
    const runIds: string[] = [];
    const seqs: number[] = [];
    const types: string[] = [];
    const payloads: string[] = [];
    for (const { item: p } of batch) {
      for (const e of p.events) {
        runIds.push(p.runId);
        seqs.push(e.seq);
        types.push(e.type);
        payloads.push(e.data);
      }
    }
    let owned: Set<string>;
    try {
      const rows: { id: string }[] = await this.q.query(
        `WITH runs_in AS (
           SELECT * FROM unnest($5::uuid[], $6::int[], $7::text[]) AS v(id, last_seq, lease_owner)
         ), owned AS (
           UPDATE runs SET updated_at = now(), last_seq = v.last_seq
             FROM runs_in v
            WHERE runs.id = v.id AND runs.lease_owner = v.lease_owner
           RETURNING runs.id, pg_notify('${this.channel}', runs.id::text || ' ' || v.last_seq::text)
         ), ev AS (
           INSERT INTO run_events (run_id, seq, type, payload)
           SELECT u.run_id, u.seq, u.type, u.payload::json
             FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[]) AS u(run_id, seq, type, payload)
            WHERE u.run_id IN (SELECT id FROM owned)
         )
         SELECT id FROM owned`,
        [
          runIds,
          seqs,
          types,
          payloads,
          batch.map((p) => p.item.runId),
          batch.map((p) => p.item.events[p.item.events.length - 1].seq),
          batch.map((p) => p.item.leaseOwner),
        ],
      );
      owned = new Set(rows.map((r) => r.id));
    } catch (err) {
      // The database out of reach: every run retries on its own (first asking whether this landed).
      // Anything else (one run's bad row, say): each run's own write says it for that run alone.
      if (isStoreUnavailable(err)) for (const p of batch) p.reject(err);
      else await Promise.all(batch.map((p) => this.alone(p)));
      return;
    }
    for (const p of batch) {
      if (owned.has(p.item.runId)) p.resolve();
      else p.reject(new LeaseLost(p.item.runId));
    }
  }
}
