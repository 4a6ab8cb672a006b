import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { aheadInLine } from '../persistence/priority-pool';
import type { RunReplay } from '../persistence/entities/run.entity';
import type { StoredMessagePart } from '../persistence/entities/message.entity';
import { RUN_EVENTS_CHANNEL, type EventRecord } from './run-store.service';
import {
  SESSION_COLUMNS,
  SESSION_OPTION_COLUMNS,
  SESSION_OPTION_COUNT,
  sessionOptionPlaceholders,
  sessionOptionValues,
  type NewSession,
  type SessionRow,
} from './session-store.service';
import type { ResponseFormat } from '../common/response-format';
import type { Queryable } from './store-sql';
import { isUniqueViolation, SessionHasActiveRun } from './store-errors';

/** The run row a start inserts, leased to the starting process. */
export interface NewRun {
  id: string;
  sessionId: string;
  owner: string;
  model: string;
  maxIterations: number;
  leaseOwner: string;
  /** The `traceparent` of the run's first span (RunTracing); null without tracing. */
  traceParent: string | null;
  /** What its final answer must be (the prompt's, else the session's); null: free text. */
  responseFormat: ResponseFormat | null;
  /** A replay's record (RunReplay); absent or null for any other run. */
  replay?: RunReplay | null;
}

/** A message a start stores, its id chosen by the caller. */
export interface NewMessage {
  id: string;
  content: string;
  /** A prompt's parts when it had files ("Attachments"). */
  parts?: StoredMessagePart[] | null;
}

/**
 * Everything one start writes: the run (leased) with its first event, and what it answers — a prompt
 * in a new session (with the session and its system message), a prompt in the run's session, or the
 * session's last prompt again (`regenerate`).
 */
export interface RunStart {
  run: NewRun;
  firstEvent: EventRecord;
  answers:
    | { kind: 'new-session'; session: NewSession; system: NewMessage; prompt: NewMessage }
    | { kind: 'prompt'; prompt: NewMessage }
    | { kind: 'regenerate' };
}

/** A key's runs as a start counted them: started in the last minute, active now, the minute's oldest. */
export interface KeyRunCounts {
  lastMinute: number;
  active: number;
  /** How long ago the minute's oldest start was (0 when there is none). */
  oldestAgeMs: number;
}

/** What a start statement did: nothing (the key had no room), or the run is stored; with the key's counts before it. */
export type StartOutcome =
  | { admitted: false; counts: KeyRunCounts }
  | {
      admitted: true;
      counts: KeyRunCounts;
      /**
       * The answered prompt's position; null when nothing was stored after all — the session is gone
       * (`prompt`) or has no prompt to answer again (`regenerate`).
       */
      promptSeq: number | null;
      /** The session a `new-session` start created. */
      session: SessionRow | null;
    };

/**
 * The key's counts, and whether they leave room for one more run with `$11` to spare (see
 * RunStartStore.start). Parameters as `params` orders them.
 */
const ADMISSION_CTES = `counts AS (
         SELECT m.n AS "lastMinute", m."oldestAgeMs",
                (SELECT count(*) FROM runs WHERE owner = $3 AND status IN ('running', 'requires_action')) AS "active"
           FROM (SELECT count(*) AS n, (extract(epoch FROM now() - min(started_at)) * 1000)::float8 AS "oldestAgeMs"
                   FROM run_starts WHERE owner = $3 AND started_at > now() - interval '1 minute') m
       ), admitted AS (
         SELECT 1 FROM counts WHERE "lastMinute" + $11::int < $12::int AND "active" + $11::int < $13::int
       )`;

/**
 * What every start writes besides what it answers, once for each row of `gate` (one, or none): the
 * run (leased), its first event, and the key's start in run_starts (the minute's older ones pruned).
 */
const newRunCtes = (gate: string, traceParent: string, responseFormat: string, replay: string) => `run AS (
         INSERT INTO runs (id, session_id, owner, status, model, max_iterations, lease_owner, lease_expires_at, last_seq, trace_parent, response_format, replay)
         SELECT $1::uuid, $2::uuid, $3, 'running', $4, $5::int, $6, now() + $7::int * interval '1 millisecond', $9::int, ${traceParent}, ${responseFormat}, ${replay}
           FROM ${gate}
       ), ev AS (
         INSERT INTO run_events (run_id, seq, type, payload) SELECT $1::uuid, $9::int, $10, $8::json FROM ${gate}
       ), started AS (
         INSERT INTO run_starts (owner) SELECT $3 FROM ${gate}
       ), pruned AS (
         DELETE FROM run_starts WHERE owner = $3 AND started_at < now() - interval '1 minute'
       )`;

const COUNTS = `c."lastMinute", c."oldestAgeMs", c."active"`;

/**
 * A child run's start (a `delegate` call's, docs/decisions/022) announces itself in its parent's log
 * in the same statement — `subagent_started` numbered after the parent's last event (the update
 * locks the parent's row: whoever else writes its log waits) — so it comes before any event of the
 * child; its parent's waiting ancestors get a copy, as of every event of their descendants
 * (ancestor-copies.ts). Parameters from \`$first\`: the parent run, the call, the agent.
 */
const subagentStarted = (first: number) => {
  const parent = `$${first}::uuid`;
  const parentOf = (run: string) =>
    `SELECT s.parent_run_id FROM runs r JOIN sessions s ON s.id = r.session_id WHERE r.id = ${run}`;
  return `parent_bump AS (
         UPDATE runs SET last_seq = last_seq + 1, updated_at = now()
          WHERE status = 'requires_action' AND EXISTS (SELECT 1 FROM s) AND id IN (
            WITH RECURSIVE up(run_id, depth) AS (
              SELECT ${parent}, 0
              UNION ALL
              SELECT (${parentOf('up.run_id')}), up.depth + 1 FROM up WHERE up.run_id IS NOT NULL AND up.depth < 64
            ) SELECT run_id FROM up WHERE run_id IS NOT NULL)
         RETURNING id, last_seq, pg_notify('${RUN_EVENTS_CHANNEL}', id::text || ' ' || last_seq::text)
       ), parent_ev AS (
         INSERT INTO run_events (run_id, seq, type, payload)
         SELECT id, last_seq, 'subagent_started', (jsonb_build_object('type', 'subagent_started', 'runId', ${parent},
                'seq', last_seq, 'toolCallId', $${first + 1}::text, 'agent', $${first + 2}::text,
                'childRunId', $1::uuid, 'childSessionId', $2::uuid)
                || CASE WHEN id = ${parent} THEN '{}'::jsonb
                        ELSE jsonb_build_object('parentRunId', (${parentOf(parent)})) END)::json
           FROM parent_bump
       )`;
};

/**
 * A run's start as one statement (RunStarts decides when it runs alone and when in a transaction).
 * A second active run of a session fails on the unique index: SessionHasActiveRun.
 */
@Injectable()
export class RunStartStore {
  private readonly leaseMs: number;
  private readonly runsPerMinute: number;
  private readonly activeRuns: number;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.leaseMs = config.runLeaseMs;
    this.runsPerMinute = config.rateLimitRunsPerMinute;
    this.activeRuns = config.maxActiveRunsPerKey;
  }

  /**
   * Stores `start` when the key's counts are more than `margin` below each of its limits; otherwise
   * stores nothing and answers the counts. The counts miss the starts of transactions not committed
   * yet, unless the key's lock (`lockKey`) was taken in this statement's transaction first: with it,
   * and margin 0, no two starts can both see room for one.
   */
  async start(q: Queryable, start: RunStart, margin: number): Promise<StartOutcome> {
    const { sql, params, extra = [] } = this.statement(start);
    let rows: (KeyRunCounts & Partial<SessionRow> & { seq: number | null; stored: boolean })[];
    try {
      // Ahead of what records runs in the line for a connection: a person waits on this one.
      rows = await aheadInLine(() =>
        q.query(sql, [
          ...this.params(start, margin),
          ...params,
          start.run.traceParent,
          start.run.responseFormat === null ? null : JSON.stringify(start.run.responseFormat),
          start.run.replay ? JSON.stringify(start.run.replay) : null,
          ...extra,
        ]),
      );
    } catch (err) {
      // Another start opened a run on this session between the caller's look and this insert.
      if (isUniqueViolation(err)) throw new SessionHasActiveRun(start.run.sessionId);
      throw err;
    }
    const row = rows[0];
    const counts = {
      lastMinute: Number(row.lastMinute),
      active: Number(row.active),
      oldestAgeMs: row.oldestAgeMs ?? 0,
    };
    if (!row.stored) return { admitted: false, counts };
    const { lastMinute: _l, active: _a, oldestAgeMs: _o, seq, stored: _s, ...session } = row;
    return {
      admitted: true,
      counts,
      promptSeq: seq,
      session: start.answers.kind === 'new-session' ? (session as SessionRow) : null,
    };
  }

  /** Serialises the key's starts for the rest of the transaction (see `start`). */
  async lockKey(tx: Queryable, owner: string): Promise<void> {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [owner]);
  }

  private statement(start: RunStart): { sql: string; params: unknown[]; extra?: unknown[] } {
    const answers = start.answers;
    // The parameters after the new session's options.
    const after = 14 + SESSION_OPTION_COUNT;
    // The run's traceparent, response format and replay come after the answers' parameters (then a
    // child's delegation: its parent run, call and agent).
    const trace = (count: number): [string, string, string] => [
      `$${14 + count}::text`,
      `$${15 + count}::jsonb`,
      `$${16 + count}::jsonb`,
    ];
    switch (answers.kind) {
      case 'new-session': {
        const delegation = answers.session.delegation;
        return {
          // The system message is the session's first, the prompt its second.
          sql: `WITH ${ADMISSION_CTES}, s AS (
                  INSERT INTO sessions (id, owner, ${SESSION_OPTION_COLUMNS}, next_message_seq)
                  SELECT $2::uuid, $3, ${sessionOptionPlaceholders(14)}, 3 FROM admitted
                  RETURNING ${SESSION_COLUMNS}
                ), sys AS (
                  INSERT INTO messages (id, session_id, seq, role, content) SELECT $${after}::uuid, $2::uuid, 1, 'system', $${after + 1} FROM s
                ), msg AS (
                  INSERT INTO messages (id, session_id, run_id, seq, role, content, parts)
                  SELECT $${after + 2}::uuid, $2::uuid, $1::uuid, 2, 'user', $${after + 3}, $${after + 4}::jsonb FROM s
                ), ${newRunCtes('s', ...trace(SESSION_OPTION_COUNT + 5))}${delegation ? `, ${subagentStarted(after + 8)}` : ''}
                SELECT ${COUNTS}, s.id IS NOT NULL AS stored, 2 AS seq, s.* FROM counts c LEFT JOIN s ON true`,
          params: [
            ...sessionOptionValues(answers.session),
            answers.system.id,
            answers.system.content,
            answers.prompt.id,
            answers.prompt.content,
            partsParam(answers.prompt),
          ],
          extra: delegation
            ? [delegation.parentRunId, delegation.parentCallId, answers.session.agent ?? '']
            : [],
        };
      }
      case 'prompt':
        return {
          sql: `WITH ${ADMISSION_CTES}, pos AS (
                  UPDATE sessions SET next_message_seq = next_message_seq + 1, updated_at = now()
                   WHERE id = $2::uuid AND EXISTS (SELECT 1 FROM admitted) RETURNING next_message_seq - 1 AS seq
                ), msg AS (
                  INSERT INTO messages (id, session_id, run_id, seq, role, content, parts)
                  SELECT $14::uuid, $2::uuid, $1::uuid, pos.seq, 'user', $15, $16::jsonb FROM pos
                ), ${newRunCtes('pos', ...trace(3))}
                SELECT ${COUNTS}, EXISTS (SELECT 1 FROM admitted) AS stored, (SELECT seq FROM pos) AS seq FROM counts c`,
          params: [answers.prompt.id, answers.prompt.content, partsParam(answers.prompt)],
        };
      case 'regenerate':
        // No new message: the runs that answered the last prompt so far are marked superseded by
        // this one, so their answers leave the conversation (ConversationStore.sessionMessages).
        return {
          sql: `WITH ${ADMISSION_CTES}, last AS (
                  SELECT m.seq, r.created_at FROM messages m JOIN runs r ON r.id = m.run_id
                   WHERE m.session_id = $2::uuid AND m.role = 'user' ORDER BY m.seq DESC LIMIT 1
                ), go AS (
                  SELECT last.seq, last.created_at FROM last, admitted
                ), superseded AS (
                  UPDATE runs SET superseded_by = $1::uuid, updated_at = now()
                   WHERE session_id = $2::uuid AND superseded_by IS NULL AND created_at >= (SELECT created_at FROM go)
                ), ${newRunCtes('go', ...trace(0))}
                SELECT ${COUNTS}, EXISTS (SELECT 1 FROM admitted) AS stored, (SELECT seq FROM go) AS seq FROM counts c`,
          params: [],
        };
    }
  }

  /** $1–$13: the run and its first event, then the margin and the key's two limits. */
  private params(start: RunStart, margin: number): unknown[] {
    const { run, firstEvent } = start;
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
      margin,
      this.runsPerMinute,
      this.activeRuns,
    ];
  }
}

/** A prompt's parts as the statement's jsonb parameter (null: a prompt without files). */
function partsParam(prompt: NewMessage): string | null {
  return prompt.parts ? JSON.stringify(prompt.parts) : null;
}
