import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { RunError, RunStatus } from '../persistence/entities/run.entity';
import { EventAppendBatcher } from './event-append-batcher';
import { LeaseLost } from './store-errors';

/** Anything that can run a query: the data source or a transaction's manager. */
export type Queryable = Pick<EntityManager, 'query'>;

export const RUN_EVENTS_CHANNEL = 'lw_run_events';
/** Where a process asks the one driving a run to cancel it (payload: the run id). */
export const RUN_CANCEL_CHANNEL = 'lw_run_cancel';
/** Where a process says it gave up a run's lease (payload: the run id): another may take it over now. */
export const RUN_HANDOVER_CHANNEL = 'lw_run_handover';

/** A run this process has just taken over: leased to it, its resumes counted. */
export interface ClaimedRun {
  id: string;
  /** Its process gave it up while shutting down (`shutdown`), or died (`process_lost`). */
  reason: 'process_lost' | 'shutdown';
}

/** An event as the log stores it: its number, its type and its JSON text (serialised once). */
export interface EventRecord {
  seq: number;
  type: string;
  data: string;
}

export interface RunRow {
  id: string;
  sessionId: string;
  owner: string;
  status: RunStatus;
  model: string;
  maxIterations: number;
  iterations: number;
  promptTokens: number;
  completionTokens: number;
  /** USD of the run's priced model calls; null while none had a price. */
  costUsd: number | null;
  /** The `traceparent` of the run's first span, for whoever drives it next; null without tracing. */
  traceParent: string | null;
  error: RunError | null;
  lastSeq: number;
  finalMessageId: string | null;
  leaseOwner: string | null;
  leaseExpired: boolean;
  cancelRequested: boolean;
  createdAt: Date;
  finishedAt: Date | null;
}

/** A run's changes, as the loop and the decisions make them. */
export type RunChanges = Partial<{
  status: RunStatus;
  iterations: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number | null;
  error: RunError | null;
  finalMessageId: string | null;
  leaseOwner: string | null;
  finished: boolean;
}>;

/** One SQL statement with its parameters ($1 … in its own numbering). */
export interface SqlStatement {
  sql: string;
  params: unknown[];
}

const RUN_COLUMNS = `id, session_id AS "sessionId", owner, status, model, max_iterations AS "maxIterations",
  iterations, prompt_tokens AS "promptTokens", completion_tokens AS "completionTokens",
  cost_usd AS "costUsd", trace_parent AS "traceParent", error,
  last_seq AS "lastSeq", final_message_id AS "finalMessageId", lease_owner AS "leaseOwner",
  (lease_expires_at IS NULL OR lease_expires_at < now()) AS "leaseExpired",
  cancel_requested AS "cancelRequested", created_at AS "createdAt", finished_at AS "finishedAt"`;

/**
 * Runs and their event log: state, leases, limits, and the events every stream reads.
 * Hand-written SQL on the hot path (TypeORM's entity manager costs a round trip per save here).
 */
@Injectable()
export class RunStore {
  /** How long a process's claim on a running run holds without renewal (RUN_LEASE_MS). */
  private readonly leaseMs: number;
  private readonly textBatcher: EventAppendBatcher;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.leaseMs = config.runLeaseMs;
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

  async updateRun(tx: Queryable, runId: string, fields: RunChanges): Promise<void> {
    const params: unknown[] = [runId];
    await tx.query(`UPDATE runs SET ${this.runSets(fields, params).join(', ')} WHERE id = $1`, params);
  }

  /**
   * Several writes, the run's changes and its new events, in ONE statement (data-modifying CTEs):
   * atomic without a transaction, and one round trip instead of one per write — the hot path of
   * every step. `writes` must not touch the `runs` row (a row updated twice in one statement keeps
   * only one of the updates); put run changes in `fields`.
   *
   * With `leaseOwner`, the statement only lands while the run is leased to that process: otherwise
   * it fails as a whole (every CTE with it) and this throws LeaseLost — a process whose lease ran out
   * never writes into a run another process took over or ended.
   */
  async writeWithEvents(
    q: Queryable,
    runId: string,
    events: readonly EventRecord[],
    writes: readonly SqlStatement[] = [],
    fields: RunChanges = {},
    leaseOwner?: string,
  ): Promise<void> {
    const params: unknown[] = [runId];
    const ctes = writes.map((w, i) => {
      const sql = renumber(w.sql, params.length);
      params.push(...w.params);
      return `w${i} AS (${sql})`;
    });
    const sets = this.runSets(fields, params);
    if (events.length > 0) {
      params.push(
        events.map((e) => e.seq),
        events.map((e) => e.type),
        events.map((e) => e.data),
      );
      const n = params.length;
      ctes.push(
        `ev AS (INSERT INTO run_events (run_id, seq, type, payload)
           SELECT $1::uuid, u.seq, u.type, u.payload::json
             FROM unnest($${n - 2}::int[], $${n - 1}::text[], $${n}::text[]) AS u(seq, type, payload))`,
      );
      params.push(events[events.length - 1].seq);
      sets.push(`last_seq = $${params.length}::int`);
    }
    const update = `UPDATE runs SET ${sets.join(', ')} WHERE id = $1::uuid`;
    const notify = `pg_notify('${RUN_EVENTS_CHANNEL}', id::text || ' ' || last_seq::text)`;
    if (leaseOwner === undefined) {
      await q.query(
        `${ctes.length > 0 ? `WITH ${ctes.join(',\n')}\n` : ''}${update} RETURNING ${notify}`,
        params,
      );
      return;
    }
    params.push(leaseOwner);
    ctes.push(`owned AS (${update} AND lease_owner = $${params.length} RETURNING ${notify})`);
    try {
      // No row updated means the lease is gone: dividing by that count (zero) raises, which undoes
      // every CTE of the statement — one round trip, nothing written. No other part of a write divides.
      await q.query(
        `WITH ${ctes.join(',\n')}\nSELECT 1 / (SELECT count(*)::int FROM owned) AS owned`,
        params,
      );
    } catch (err) {
      if ((err as { code?: unknown }).code === DIVISION_BY_ZERO) throw new LeaseLost(runId);
      throw err;
    }
  }

  /** Locks the run's row for the transaction and throws LeaseLost unless `leaseOwner` still holds it. */
  async assertLeased(tx: Queryable, runId: string, leaseOwner: string): Promise<void> {
    const rows: unknown[] = await tx.query(
      `SELECT 1 FROM runs WHERE id = $1 AND lease_owner = $2 FOR UPDATE`,
      [runId, leaseOwner],
    );
    if (rows.length === 0) throw new LeaseLost(runId);
  }

  /** The run's last stored event and its lease holder: after a dropped connection, did the write land? */
  async writeState(runId: string): Promise<{ lastSeq: number; leaseOwner: string | null } | null> {
    const rows: { lastSeq: number; leaseOwner: string | null }[] = await this.db.query(
      `SELECT last_seq AS "lastSeq", lease_owner AS "leaseOwner" FROM runs WHERE id = $1`,
      [runId],
    );
    return rows[0] ?? null;
  }

  /** SET assignments for `fields`, their values appended to `params`. */
  private runSets(fields: RunChanges, params: unknown[]): string[] {
    const sets: string[] = ['updated_at = now()'];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (fields.status !== undefined) set('status', fields.status);
    if (fields.iterations !== undefined) set('iterations', fields.iterations);
    if (fields.promptTokens !== undefined) set('prompt_tokens', fields.promptTokens);
    if (fields.completionTokens !== undefined) set('completion_tokens', fields.completionTokens);
    if (fields.costUsd !== undefined) set('cost_usd', fields.costUsd);
    if (fields.error !== undefined) set('error', fields.error === null ? null : JSON.stringify(fields.error));
    if (fields.finalMessageId !== undefined) set('final_message_id', fields.finalMessageId);
    if (fields.leaseOwner !== undefined) {
      set('lease_owner', fields.leaseOwner);
      sets.push(
        fields.leaseOwner === null
          ? 'lease_expires_at = NULL'
          : `lease_expires_at = now() + ${this.leaseMs} * interval '1 millisecond'`,
      );
    }
    if (fields.finished) sets.push('finished_at = now()', 'lease_owner = NULL', 'lease_expires_at = NULL');
    return sets;
  }

  /** Asks whichever process drives the run to cancel it: the flag (seen at its next lease renewal) and a notice, in one statement. */
  async requestCancel(runId: string): Promise<void> {
    await this.db.query(
      `UPDATE runs SET cancel_requested = true WHERE id = $1 RETURNING pg_notify('${RUN_CANCEL_CHANNEL}', id::text)`,
      [runId],
    );
  }

  /** Extends this process's leases; returns the runs whose lease it renewed, with those someone asked to cancel. */
  async renewLeases(
    leaseOwner: string,
    runIds: string[],
  ): Promise<{ renewed: string[]; cancelled: string[] }> {
    if (runIds.length === 0) return { renewed: [], cancelled: [] };
    const rows = returningRows<{ id: string; cancelRequested: boolean }>(
      await this.db.query(
        `UPDATE runs SET lease_expires_at = now() + $3::int * interval '1 millisecond'
          WHERE id = ANY($1::uuid[]) AND lease_owner = $2 AND status = 'running'
          RETURNING id, cancel_requested AS "cancelRequested"`,
        [runIds, leaseOwner, this.leaseMs],
      ),
    );
    return {
      renewed: rows.map((r) => r.id),
      cancelled: rows.filter((r) => r.cancelRequested).map((r) => r.id),
    };
  }

  /**
   * Takes over runs whose lease ran out (their process died, hung, or gave them up), in ONE
   * statement: each such row is locked and re-checked by whichever process gets to it first (the
   * others skip it, or see the lease renewed), so every lost run is claimed exactly once among any
   * number of processes. It leases them to `leaseOwner` and counts the take-over. Runs taken over
   * `maxResumes` times already, or asked to cancel, are not claimed: they are ended instead
   * (`endableRuns`); nor are those of `skip`. A lease given up at shutdown has no owner: that is how
   * its reason is told.
   */
  async claimExpiredRuns(
    leaseOwner: string,
    maxResumes: number,
    limit = 100,
    skip: readonly string[] = [],
  ): Promise<ClaimedRun[]> {
    return returningRows<ClaimedRun>(
      await this.db.query(
        `WITH lost AS (
           SELECT id, lease_owner IS NULL AS handed_over FROM runs
            WHERE status = 'running' AND lease_expires_at <= now() AND resumes < $2 AND NOT cancel_requested
              AND NOT (id = ANY($5::uuid[]))
            ORDER BY lease_expires_at LIMIT $3
              FOR UPDATE SKIP LOCKED)
         UPDATE runs r SET lease_owner = $1, lease_expires_at = now() + $4::int * interval '1 millisecond',
                resumes = r.resumes + 1, updated_at = now()
           FROM lost WHERE r.id = lost.id
         RETURNING r.id, CASE WHEN lost.handed_over THEN 'shutdown' ELSE 'process_lost' END AS reason`,
        [leaseOwner, maxResumes, limit, this.leaseMs, skip],
      ),
    );
  }

  /**
   * Runs left `running` by a process whose lease ran out that are not to be taken over: lost more
   * than `maxResumes` times (they fail), or asked to cancel while nobody drove them.
   */
  async endableRuns(maxResumes: number, limit = 50): Promise<{ id: string; cancelRequested: boolean }[]> {
    return this.db.query(
      `SELECT id, cancel_requested AS "cancelRequested" FROM runs
        WHERE status = 'running' AND lease_expires_at <= now() AND (resumes >= $1 OR cancel_requested)
        ORDER BY lease_expires_at LIMIT $2`,
      [maxResumes, limit],
    );
  }

  /**
   * Gives up this process's leases of `runIds` at once (a shutdown hands its runs over): the lease
   * expires now and has no owner, so no write of this process lands any more, and a notice tells
   * every other process to take the runs over. Returns the runs given up.
   */
  async releaseLeases(leaseOwner: string, runIds: string[]): Promise<string[]> {
    if (runIds.length === 0) return [];
    const rows = returningRows<{ id: string }>(
      await this.db.query(
        `UPDATE runs SET lease_owner = NULL, lease_expires_at = now(), updated_at = now()
          WHERE id = ANY($1::uuid[]) AND lease_owner = $2 AND status = 'running'
          RETURNING id, pg_notify('${RUN_HANDOVER_CHANNEL}', id::text)`,
        [runIds, leaseOwner],
      ),
    );
    return rows.map((r) => r.id);
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
  appendBatched(runId: string, events: readonly EventRecord[], leaseOwner: string): Promise<void> {
    return events.length === 0 ? Promise.resolve() : this.textBatcher.append(runId, events, leaseOwner);
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

const DIVISION_BY_ZERO = '22012';

/** Moves a statement's $n placeholders after `offset` parameters that come before it. */
function renumber(sql: string, offset: number): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
}

/** TypeORM answers UPDATE/DELETE … RETURNING with `[rows, affectedCount]` on PostgreSQL. */
export function returningRows<T>(result: unknown): T[] {
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}
