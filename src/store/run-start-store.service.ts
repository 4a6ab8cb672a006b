import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import type { EventRecord, Queryable } from './run-store.service';

/** The run row a start inserts, leased to the starting process. */
export interface NewRun {
  id: string;
  sessionId: string;
  owner: string;
  model: string;
  maxIterations: number;
  leaseOwner: string;
}

/**
 * What every start writes besides its prompt: the run (leased), its first event, and the key's start
 * in run_starts (the minute's older starts pruned). Parameters $1–$10 as `newRunParams` orders them.
 */
const NEW_RUN_CTES = `run AS (
         INSERT INTO runs (id, session_id, owner, status, model, max_iterations, lease_owner, lease_expires_at, last_seq)
         VALUES ($1, $2, $3, 'running', $4, $5, $6, now() + $7::int * interval '1 millisecond', $9)
       ), ev AS (
         INSERT INTO run_events (run_id, seq, type, payload) VALUES ($1, $9, $10, $8::json)
       ), started AS (
         INSERT INTO run_starts (owner) VALUES ($3)
       ), pruned AS (
         DELETE FROM run_starts WHERE owner = $3 AND started_at < now() - interval '1 minute'
       )`;

/**
 * The statements of a run's start transaction (RunStarts): the per-key counts behind the limits, and
 * the new run in one statement. A second active run of a session fails on the unique index (23505).
 */
@Injectable()
export class RunStartStore {
  private readonly leaseMs: number;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.leaseMs = config.runLeaseMs;
  }

  /**
   * Runs started by `owner` in the last minute (counted in run_starts, which deleting sessions does not
   * touch), active now, and when the oldest of the minute leaves it. Not `exact`, the counts miss the
   * starts of other transactions that have not committed yet.
   */
  async ownerRunCounts(
    tx: Queryable,
    owner: string,
    exact: boolean,
  ): Promise<{ lastMinute: number; active: number; oldestAgeMs: number }> {
    // Exact: serialised per key for the rest of the transaction, so two starts never both see room
    // for one (the count then sees every start that committed before the lock was granted).
    if (exact) await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [owner]);
    const rows: { lastMinute: string; active: string; oldestAgeMs: number | null }[] = await tx.query(
      `SELECT s.n AS "lastMinute", s."oldestAgeMs",
              (SELECT count(*) FROM runs WHERE owner = $1 AND status IN ('running', 'requires_action')) AS "active"
         FROM (SELECT count(*) AS n, (extract(epoch FROM now() - min(started_at)) * 1000)::float8 AS "oldestAgeMs"
                 FROM run_starts WHERE owner = $1 AND started_at > now() - interval '1 minute') s`,
      [owner],
    );
    const row = rows[0];
    return {
      lastMinute: Number(row?.lastMinute ?? 0),
      active: Number(row?.active ?? 0),
      oldestAgeMs: row?.oldestAgeMs ?? 0,
    };
  }

  /** A new run with the prompt as the session's next message. Returns the prompt's position. */
  async insertRun(
    tx: Queryable,
    run: NewRun,
    prompt: { id: string; content: string },
    firstEvent: EventRecord,
  ): Promise<number> {
    const rows: { seq: number }[] = await tx.query(
      `WITH pos AS (
         UPDATE sessions SET next_message_seq = next_message_seq + 1, updated_at = now()
          WHERE id = $2::uuid RETURNING next_message_seq - 1 AS seq
       ), msg AS (
         INSERT INTO messages (id, session_id, run_id, seq, role, content)
         SELECT $11::uuid, $2::uuid, $1::uuid, pos.seq, 'user', $12 FROM pos
       ), ${NEW_RUN_CTES}
       SELECT seq FROM pos`,
      [...this.newRunParams(run, firstEvent), prompt.id, prompt.content],
    );
    if (!rows[0]) throw new Error(`session ${run.sessionId} vanished`);
    return rows[0].seq;
  }

  /**
   * A run that answers the session's last prompt again (the AI SDK's `regenerate-message`): no new
   * message; the runs that answered that prompt so far are marked superseded by this one, so their
   * answers leave the conversation (ConversationStore.sessionMessages). Returns the prompt's
   * position, or null when the session has no prompt to answer again.
   */
  async insertRegeneratedRun(tx: Queryable, run: NewRun, firstEvent: EventRecord): Promise<number | null> {
    const rows: { seq: number | null }[] = await tx.query(
      `WITH last AS (
         SELECT m.seq, r.created_at FROM messages m JOIN runs r ON r.id = m.run_id
          WHERE m.session_id = $2::uuid AND m.role = 'user' ORDER BY m.seq DESC LIMIT 1
       ), superseded AS (
         UPDATE runs SET superseded_by = $1::uuid, updated_at = now()
          WHERE session_id = $2::uuid AND superseded_by IS NULL AND created_at >= (SELECT created_at FROM last)
       ), ${NEW_RUN_CTES}
       SELECT (SELECT seq FROM last) AS seq`,
      this.newRunParams(run, firstEvent),
    );
    return rows[0]?.seq ?? null;
  }

  private newRunParams(run: NewRun, firstEvent: EventRecord): unknown[] {
    return [
      run.id,
      run.sessionId,
      run.owner,
      run.model,
      run.maxIterations,
      run.leaseOwner,
      this.leaseMs,
      firstEvent.data,
      firstEvent.seq,
      firstEvent.type,
    ];
  }
}
