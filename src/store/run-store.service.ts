import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { EventAppendBatcher } from './event-append-batcher';
import type { EventRecord } from './event-record';
import * as runLeases from './run-leases';
import { RUN_COLUMNS, runSets, type RunChanges, type RunRow } from './run-row.mapper';
import { LeaseLost } from './store-errors';
import { runBuilt, Params } from './params';
import { ancestorCopies } from './ancestor-copies';
import { runWriteSql, writesOfRunChanges, type RunWrite } from './run-writes';
import { withCtes, type Queryable } from './store-sql';

// A run's types are imported with its store, from here; each is defined beside the SQL it belongs to.
export { RUN_CANCEL_CHANNEL, RUN_HANDOVER_CHANNEL, type ClaimedRun } from './run-leases';
export type { RunChanges, RunRow } from './run-row.mapper';
export { returningRows, type Queryable } from './store-sql';
export type { RunWrite } from './run-writes';
export type { EventRecord } from './event-record';

/** Where every write of a run's events says so (payload: the run id and its last seq). */
export const RUN_EVENTS_CHANNEL = 'lw_run_events';

/**
 * What a run's write answers besides landing: when it ended the run, whether a prompt waited in the
 * run's session then (one is started next: QueuedRuns) — null when the write did not end the run.
 */
export interface RunWritten {
  queuedInSession: boolean | null;
}

/**
 * Runs and their event log: a run's state and the events every stream reads, written together.
 * The row's columns and SET assignments are in run-row.mapper.ts, the lease statements (who drives
 * a run) in run-leases.ts. Hand-written SQL on the hot path (TypeORM's entity manager costs a round
 * trip per save here).
 */
@Injectable()
export class RunStore {
  /** How long a process's claim on a running run holds without renewal (RUN_LEASE_MS). */
  private readonly leaseMs: number;
  private readonly textBatcher: EventAppendBatcher;
  /** Agents are configured: a child run's events are copied into its ancestors' logs (ancestorCopies). */
  private readonly copiesToAncestors: boolean;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.leaseMs = config.runLeaseMs;
    this.copiesToAncestors = config.agents.length > 0;
    this.textBatcher = new EventAppendBatcher(this.db.manager, RUN_EVENTS_CHANNEL, (runId, events, owner) =>
      this.writeWithEvents(this.db.manager, runId, events, [], {}, owner),
    );
  }

  transaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  get queryable(): Queryable {
    return this.db.manager;
  }

  // ── runs ──────────────────────────────────────────────────────────────────

  async findRun(runId: string, owner?: string, q: Queryable = this.db.manager): Promise<RunRow | null> {
    const rows: RunRow[] = await q.query(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1 ${owner === undefined ? '' : 'AND owner = $2'}`,
      owner === undefined ? [runId] : [runId, owner],
    );
    return rows[0] ?? null;
  }

  /** Locks the run's row for the rest of the transaction: every state change of a run goes through this. */
  async lockRun(tx: Queryable, runId: string): Promise<RunRow | null> {
    const rows: RunRow[] = await tx.query(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1 FOR UPDATE`, [
      runId,
    ]);
    return rows[0] ?? null;
  }

  async activeRunOfSession(tx: Queryable, sessionId: string): Promise<string | null> {
    const rows: { id: string }[] = await tx.query(
      `SELECT id FROM runs WHERE session_id = $1 AND status IN ('running', 'requires_action')`,
      [sessionId],
    );
    return rows[0]?.id ?? null;
  }

  /** The session's newest run: its active one when it has one (no run starts while another is active). */
  async latestRunOfSession(sessionId: string): Promise<string | null> {
    const rows: { id: string }[] = await this.db.query(
      `SELECT id FROM runs WHERE session_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`,
      [sessionId],
    );
    return rows[0]?.id ?? null;
  }

  /** Changes the run's row, with `writes` (none of which can touch it) in the same statement. */
  async updateRun(
    tx: Queryable,
    runId: string,
    fields: RunChanges,
    writes: readonly RunWrite[] = [],
  ): Promise<void> {
    await runBuilt(tx, (p) => {
      const parts = [...writes, ...writesOfRunChanges(runId, fields)].flatMap((w) => runWriteSql(p, w));
      const id = p.add(runId);
      return withCtes(
        parts,
        `UPDATE runs SET ${runSets(fields, p, this.leaseMs).join(', ')} WHERE id = ${id}`,
      );
    });
  }

  /**
   * Several writes, the run's changes and its new events, in ONE statement (data-modifying CTEs):
   * atomic without a transaction, and one round trip instead of one per write — the hot path of
   * every step. `writes` cannot touch the `runs` row (no RunWrite names it: a row updated twice in
   * one statement keeps only one of the updates); the run's changes are `fields`.
   *
   * With `leaseOwner`, the statement only lands while the run is leased to that process: otherwise
   * it fails as a whole (every CTE with it) and this throws LeaseLost — a process whose lease ran out
   * never writes into a run another process took over or ended.
   *
   * A write that ends the run also answers whether a prompt waits in its session (RunWritten).
   */
  async writeWithEvents(
    q: Queryable,
    runId: string,
    events: readonly EventRecord[],
    writes: readonly RunWrite[] = [],
    fields: RunChanges = {},
    leaseOwner?: string,
  ): Promise<RunWritten> {
    const p = new Params();
    const id = `${p.add(runId)}::uuid`;
    const parts = [...writes, ...writesOfRunChanges(runId, fields)].flatMap((w) => runWriteSql(p, w));
    const sets = runSets(fields, p, this.leaseMs);
    if (events.length > 0) {
      parts.push(
        `INSERT INTO run_events (run_id, seq, type, payload)
           SELECT ${id}, u.seq, u.type, u.payload::json
             FROM unnest(${p.add(events.map((e) => e.seq))}::int[], ${p.add(events.map((e) => e.type))}::text[],
                         ${p.add(events.map((e) => e.data))}::text[]) AS u(seq, type, payload)`,
      );
      sets.push(`last_seq = ${p.add(events[events.length - 1].seq)}::int`);
      if (this.copiesToAncestors)
        parts.push(...ancestorCopies(p, id, events, parts.length, RUN_EVENTS_CHANNEL));
    }
    const update = `UPDATE runs SET ${sets.join(', ')} WHERE id = ${id}`;
    const notify = `pg_notify('${RUN_EVENTS_CHANNEL}', id::text || ' ' || last_seq::text)`;
    // Seen as of the statement's start: a prompt queued while it runs is the sweep's (QueuedRuns).
    const queued = fields.finished
      ? `EXISTS (SELECT 1 FROM runs q WHERE q.session_id = (SELECT session_id FROM runs WHERE id = ${id}) AND q.status = 'queued')`
      : 'NULL::boolean';
    let rows: { queued: boolean | null }[];
    if (leaseOwner === undefined) {
      rows = await q.query(withCtes(parts, `${update} RETURNING ${notify}, ${queued} AS queued`), p.values);
      return { queuedInSession: rows[0]?.queued ?? null };
    }
    const owned = `${update} AND lease_owner = ${p.add(leaseOwner)} RETURNING ${notify}`;
    try {
      // No row updated means the lease is gone: dividing by that count (zero) raises, which undoes
      // every CTE of the statement — one round trip, nothing written. No other part of a write divides.
      rows = await q.query(
        withCtes(
          [...parts, owned],
          `SELECT 1 / (SELECT count(*)::int FROM owned) AS owned, ${queued} AS queued`,
          'owned',
        ),
        p.values,
      );
      return { queuedInSession: rows[0]?.queued ?? null };
    } catch (err) {
      if ((err as { code?: unknown }).code === DIVISION_BY_ZERO) throw new LeaseLost(runId);
      throw err;
    }
  }

  /** The run's last stored event and its lease holder: after a dropped connection, did the write land? */
  async writeState(runId: string): Promise<{ lastSeq: number; leaseOwner: string | null } | null> {
    const rows: { lastSeq: number; leaseOwner: string | null }[] = await this.db.query(
      `SELECT last_seq AS "lastSeq", lease_owner AS "leaseOwner" FROM runs WHERE id = $1`,
      [runId],
    );
    return rows[0] ?? null;
  }

  // ── leases: who drives a run (run-leases.ts says how each statement decides it) ──

  /** Locks the run's row for the transaction and throws LeaseLost unless `leaseOwner` still holds it. */
  assertLeased(tx: Queryable, runId: string, leaseOwner: string): Promise<void> {
    return runLeases.assertLeased(tx, runId, leaseOwner);
  }

  /** Asks whichever process drives the run to cancel it (seen at its next lease renewal, and noticed at once). */
  requestCancel(runId: string): Promise<void> {
    return runLeases.requestCancel(this.db, runId);
  }

  /** Extends this process's leases; returns the runs whose lease it renewed, with those someone asked to cancel. */
  renewLeases(leaseOwner: string, runIds: string[]): Promise<{ renewed: string[]; cancelled: string[] }> {
    return runLeases.renewLeases(this.db, this.leaseMs, leaseOwner, runIds);
  }

  /** Takes over runs whose lease ran out, each claimed by exactly one process; not those to end, nor `skip`. */
  claimExpiredRuns(
    leaseOwner: string,
    maxResumes: number,
    limit = 100,
    skip: readonly string[] = [],
  ): Promise<runLeases.ClaimedRun[]> {
    return runLeases.claimExpiredRuns(this.db, this.leaseMs, leaseOwner, maxResumes, limit, skip);
  }

  /** Runs whose lease ran out that are to be ended, not taken over: lost too often, or asked to cancel. */
  endableRuns(maxResumes: number, limit = 50): Promise<{ id: string; cancelRequested: boolean }[]> {
    return runLeases.endableRuns(this.db, maxResumes, limit);
  }

  /** Gives up this process's leases of `runIds` at once (a shutdown hands its runs over); returns those given up. */
  releaseLeases(leaseOwner: string, runIds: string[]): Promise<string[]> {
    return runLeases.releaseLeases(this.db, leaseOwner, runIds);
  }

  // ── events ────────────────────────────────────────────────────────────────

  /**
   * Appends events (consecutive seqs) to the log, moves the run's `last_seq`, and notifies every
   * process following the run — in one statement; inside a transaction the notice leaves at commit.
   */
  async appendEvents(
    q: Queryable,
    runId: string,
    events: readonly EventRecord[],
    leaseOwner?: string,
  ): Promise<void> {
    if (events.length > 0) await this.writeWithEvents(q, runId, events, [], {}, leaseOwner);
  }

  /**
   * Appends events that change no state (text, tool output) while `leaseOwner` holds the run,
   * together with the same kind of appends of this process's other runs (see EventAppendBatcher).
   */
  appendBatched(runId: string, events: readonly EventRecord[], leaseOwner: string): Promise<unknown> {
    if (events.length === 0) return Promise.resolve();
    // With delegation each write may copy into ancestors' logs (ancestorCopies), which the batched
    // statement does not: every write goes alone then. Without agents nothing changes.
    if (this.copiesToAncestors)
      return this.writeWithEvents(this.db.manager, runId, events, [], {}, leaseOwner);
    return this.textBatcher.append(runId, events, leaseOwner);
  }

  async eventsAfter(runId: string, after: number, limit: number): Promise<EventRecord[]> {
    return this.db.query(
      `SELECT seq, type, payload::text AS data FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
      [runId, after, limit],
    );
  }

  /** Text streamed in the run after its last finished step: the partial answer a crash left behind. */
  async unfinishedText(tx: Queryable, runId: string): Promise<string> {
    const rows: { text: string | null }[] = await tx.query(
      `SELECT string_agg(payload->>'delta', '' ORDER BY seq) AS text FROM run_events
        WHERE run_id = $1 AND type = 'text'
          AND seq > coalesce((SELECT max(seq) FROM run_events WHERE run_id = $1 AND type = 'step_finished'), 0)`,
      [runId],
    );
    return rows[0]?.text ?? '';
  }
}

/** SQLSTATE of a division by zero: how the lease guard of writeWithEvents says the lease is gone. */
const DIVISION_BY_ZERO = '22012';
