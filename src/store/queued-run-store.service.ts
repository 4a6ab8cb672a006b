import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import type { ResponseFormat } from '../common/response-format';
import { IdempotencyStore, type ClaimedEarlier, type IdempotencyClaim } from './idempotency-store.service';
import type { EventRecord } from './run-store.service';
import { RUN_EVENTS_CHANNEL } from './run-store.service';
import { isUniqueViolation } from './store-errors';
import { returningRows, type Queryable } from './store-sql';

/** A prompt to queue behind a session's active run, its run's fields chosen by the caller. */
export interface QueuedRunDraft {
  id: string;
  sessionId: string;
  owner: string;
  model: string;
  maxIterations: number;
  prompt: string;
  /** An interrupt's run: first in the queue, its log beginning with `run_started` (no `queued`). */
  front: boolean;
  /** What its final answer must be (Structured output), kept for when it starts. */
  responseFormat: ResponseFormat | null;
}

/**
 * What an enqueue did: nothing (the session is idle: start it as usual), queued at `position`, or
 * nothing because an earlier request holds its Idempotency-Key (`earlier`: that request's run).
 */
export type EnqueueOutcome =
  | { queued: false }
  | { queued: true; position: number; activeRunId: string | null }
  | { full: true }
  | { earlier: ClaimedEarlier };

/** An outcome that stores nothing, thrown out of the enqueue's transaction so that a key's claim rolls back. */
class NothingQueued extends Error {
  constructor(readonly outcome: EnqueueOutcome) {
    super('nothing queued');
  }
}

/** A queued run its session's turn has come for, now `running` and leased to the caller. */
export interface StartedQueuedRun {
  id: string;
  sessionId: string;
}

const NOTIFY = `pg_notify('${RUN_EVENTS_CHANNEL}', id::text || ' ' || last_seq::text)`;

/**
 * Runs that wait for their session ("Messages while a run is active"): a `runs` row with status
 * `queued` holding its prompt, and the statements that queue one, start the oldest when its session
 * is idle, and cancel one. A session's row lock orders everything that changes its queue.
 */
@Injectable()
export class QueuedRunStore {
  private readonly leaseMs: number;
  private readonly maxQueue: number;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly idempotency: IdempotencyStore,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.leaseMs = config.runLeaseMs;
    this.maxQueue = config.sessionMaxQueue;
  }

  /**
   * Queues `draft` when its session is busy — an active run, or runs queued already (a new prompt
   * never overtakes them) — unless SESSION_MAX_QUEUE wait already (an interrupt's run is not
   * counted, nor refused). An idle session stores nothing: the caller starts the run as usual.
   * `queuedEvent` makes the run's first event from its position. With `key` (an Idempotency-Key)
   * the queued run claims it, as a start's run does (decision 012); when an earlier request holds it,
   * nothing is queued and that request's run is the outcome. An outcome that queues nothing leaves
   * the key unclaimed.
   */
  async enqueue(
    draft: QueuedRunDraft,
    queuedEvent: (position: number) => EventRecord,
    key?: IdempotencyClaim,
  ): Promise<EnqueueOutcome> {
    try {
      return await this.db.transaction((tx) => this.enqueueIn(tx, draft, queuedEvent, key));
    } catch (err) {
      if (err instanceof NothingQueued) return err.outcome;
      throw err;
    }
  }

  private async enqueueIn(
    tx: Queryable,
    draft: QueuedRunDraft,
    queuedEvent: (position: number) => EventRecord,
    key: IdempotencyClaim | undefined,
  ): Promise<EnqueueOutcome> {
    // The key first, then the session's row: the order a keyed start takes them in (no deadlock).
    if (key) {
      const earlier = await this.idempotency.claim(tx, key, draft.id);
      if (earlier) return { earlier };
    }
    // The session's lock: concurrent prompts to one session count its queue one after the other.
    const found: unknown[] = await tx.query(`SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE`, [
      draft.sessionId,
    ]);
    if (found.length === 0) throw new NothingQueued({ queued: false });
    const [state]: { active: string | null; waiting: number }[] = await tx.query(
      `SELECT (SELECT id FROM runs WHERE session_id = $1 AND status IN ('running', 'requires_action')) AS active,
              (SELECT count(*)::int FROM runs WHERE session_id = $1 AND status = 'queued') AS waiting`,
      [draft.sessionId],
    );
    if (state.active === null && (state.waiting === 0 || draft.front)) {
      throw new NothingQueued({ queued: false });
    }
    if (!draft.front && state.waiting >= this.maxQueue) throw new NothingQueued({ full: true });
    const position = draft.front ? 1 : state.waiting + 1;
    const event = draft.front ? null : queuedEvent(position);
    // An interrupt's run goes before every queued one (the oldest first among interrupts).
    const queuedAt = draft.front
      ? `LEAST(now(), (SELECT min(queued_at) FROM runs WHERE session_id = $2 AND status = 'queued')) - interval '1 microsecond'`
      : 'clock_timestamp()';
    await tx.query(
      `WITH run AS (
         INSERT INTO runs (id, session_id, owner, status, model, max_iterations, last_seq, queued_prompt, queued_at, response_format)
         VALUES ($1::uuid, $2::uuid, $3, 'queued', $4, $5::int, $6::int, $7, ${queuedAt}, $10::jsonb)
       )
       INSERT INTO run_events (run_id, seq, type, payload)
       SELECT $1::uuid, 1, $8, $9::json WHERE $6::int = 1`,
      [
        draft.id,
        draft.sessionId,
        draft.owner,
        draft.model,
        draft.maxIterations,
        event ? 1 : 0,
        draft.prompt,
        event?.type ?? 'queued',
        event?.data ?? '{}',
        draft.responseFormat === null ? null : JSON.stringify(draft.responseFormat),
      ],
    );
    return { queued: true, position, activeRunId: state.active };
  }

  /**
   * Starts the session's oldest queued run when the session has no active one: in one transaction
   * its prompt becomes the session's next message, `run_started` (from `startedEvent`, given its
   * seq and model) its next event, and the run `running`, leased to `leaseOwner`. Null when there is nothing
   * to start — or another process is starting one of this session right now (it holds the lock).
   */
  async startNext(
    sessionId: string,
    leaseOwner: string,
    messageId: string,
    startedEvent: (runId: string, seq: number, model: string) => EventRecord,
  ): Promise<StartedQueuedRun | null> {
    // Most sessions have no queue: one read of the partial index, and no transaction, for them.
    const waiting: unknown[] = await this.db.query(
      `SELECT 1 FROM runs WHERE session_id = $1 AND status = 'queued' LIMIT 1`,
      [sessionId],
    );
    if (waiting.length === 0) return null;
    try {
      return await this.db.transaction(async (tx) => {
        const locked: unknown[] = await tx.query(
          `SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE SKIP LOCKED`,
          [sessionId],
        );
        if (locked.length === 0) return null;
        const next: { id: string; owner: string; model: string; lastSeq: number }[] = await tx.query(
          `SELECT id, owner, model, last_seq AS "lastSeq" FROM runs
            WHERE session_id = $1 AND status = 'queued'
              AND NOT EXISTS (SELECT 1 FROM runs a WHERE a.session_id = $1 AND a.status IN ('running', 'requires_action'))
            ORDER BY queued_at, created_at LIMIT 1`,
          [sessionId],
        );
        if (next.length === 0) return null;
        const run = next[0];
        const event = startedEvent(run.id, run.lastSeq + 1, run.model);
        await tx.query(
          `WITH pos AS (
             UPDATE sessions SET next_message_seq = next_message_seq + 1, updated_at = now()
              WHERE id = $2::uuid RETURNING next_message_seq - 1 AS seq
           ), msg AS (
             INSERT INTO messages (id, session_id, run_id, seq, role, content)
             SELECT $3::uuid, $2::uuid, $1::uuid, pos.seq, 'user', r.queued_prompt FROM pos, runs r WHERE r.id = $1::uuid
           ), ev AS (
             INSERT INTO run_events (run_id, seq, type, payload) VALUES ($1::uuid, $4::int, $5, $6::json)
           ), started AS (
             INSERT INTO run_starts (owner) VALUES ($7)
           )
           UPDATE runs SET status = 'running', lease_owner = $8, lease_expires_at = now() + $9::int * interval '1 millisecond',
                  last_seq = $4::int, queued_prompt = NULL, updated_at = now()
            WHERE id = $1::uuid RETURNING ${NOTIFY}`,
          [
            run.id,
            sessionId,
            messageId,
            event.seq,
            event.type,
            event.data,
            run.owner,
            leaseOwner,
            this.leaseMs,
          ],
        );
        return { id: run.id, sessionId };
      });
    } catch (err) {
      // A start on the same session won the race for its one active run: the queue waits on.
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  }

  /**
   * Ends a run that is still queued `cancelled`, its `doneEvent` (given its seq) the last of its
   * log. False when it is not queued (any more).
   */
  async cancel(runId: string, doneEvent: (seq: number) => EventRecord): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const rows: { lastSeq: number }[] = await tx.query(
        `SELECT last_seq AS "lastSeq" FROM runs WHERE id = $1 AND status = 'queued' FOR UPDATE`,
        [runId],
      );
      if (rows.length === 0) return false;
      const event = doneEvent(rows[0].lastSeq + 1);
      await tx.query(
        `WITH ev AS (INSERT INTO run_events (run_id, seq, type, payload) VALUES ($1::uuid, $2::int, $3, $4::json))
         UPDATE runs SET status = 'cancelled', last_seq = $2::int, queued_prompt = NULL, finished_at = now(), updated_at = now()
          WHERE id = $1::uuid RETURNING ${NOTIFY}`,
        [runId, event.seq, event.type, event.data],
      );
      return true;
    });
  }

  /** Sessions with a queued run and no active one (their turn has come and nobody took it up), up to `limit`. */
  async idleQueues(limit: number, q: Queryable = this.db): Promise<string[]> {
    const rows = returningRows<{ sessionId: string }>(
      await q.query(
        `SELECT DISTINCT r.session_id AS "sessionId" FROM runs r
          WHERE r.status = 'queued'
            AND NOT EXISTS (SELECT 1 FROM runs a WHERE a.session_id = r.session_id AND a.status IN ('running', 'requires_action'))
          LIMIT $1`,
        [limit],
      ),
    );
    return rows.map((r) => r.sessionId);
  }
}
