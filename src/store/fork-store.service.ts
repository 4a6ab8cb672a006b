import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { SESSION_COLUMNS, SESSION_SETTING_COLUMNS, type SessionRow } from './session-store.service';
import type { Queryable } from './store-sql';

/**
 * A message the conversation lists: a prompt, or a message of a run that was not answered again
 * (regenerated) — what ConversationStore.sessionMessages lists, as a condition on `m`.
 */
const LISTED = `(m.role = 'user' OR NOT EXISTS (
                  SELECT 1 FROM runs r WHERE r.id = m.run_id AND r.superseded_by IS NOT NULL))`;

/** Where a fork of a session may be cut, or why not (`null` when the session is not the owner's). */
export type ForkPoint =
  { ok: true; seq: number } | { ok: false; why: 'not-a-message' | 'inside-tool-calls' | 'empty' };

/** A fork as stored: the new session, and how many messages it was given. */
export interface StoredFork {
  session: SessionRow;
  copied: number;
}

/**
 * Forks in PostgreSQL (decision 021): a fork is a new session holding a copy of its source's
 * conversation up to a cut, written by one INSERT … SELECT — so the two never share a row, and
 * compaction, deletion and every read of either work as on any session.
 */
@Injectable()
export class ForkStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Where the owner's session `sessionId` may be cut: after `atMessageId`, or by default after its
   * last listed message — before the newest step when its calls are not all answered yet (a run
   * still active). A cut never falls between an assistant message with tool calls and the tool
   * messages that answer it: those sit at the positions right after it, one per call. Null when the
   * owner has no such session.
   */
  async point(owner: string, sessionId: string, atMessageId: string | null): Promise<ForkPoint | null> {
    const rows: { found: boolean; at: number | null; last: number | null }[] = await this.db.query(
      `SELECT true AS found,
              (SELECT m.seq FROM messages m WHERE m.session_id = s.id AND m.id::text = $3 AND ${LISTED}) AS at,
              (SELECT max(m.seq) FROM messages m WHERE m.session_id = s.id AND ${LISTED}) AS last
         FROM sessions s WHERE s.id = $1 AND s.owner = $2`,
      [sessionId, owner, atMessageId ?? ''],
    );
    const row = rows[0];
    if (!row) return null;
    if (atMessageId !== null && row.at === null) return { ok: false, why: 'not-a-message' };
    const cut = atMessageId !== null ? row.at : row.last;
    if (cut === null) return { ok: false, why: 'empty' };
    const group = await this.lastToolGroup(sessionId, cut);
    if (group === null || (group.answered === group.calls && group.seq + group.calls <= cut)) {
      return { ok: true, seq: cut };
    }
    if (atMessageId !== null) return { ok: false, why: 'inside-tool-calls' };
    // The newest step's calls are still being answered: the fork ends before that step.
    const before: { seq: number | null }[] = await this.db.query(
      `SELECT max(m.seq) AS seq FROM messages m WHERE m.session_id = $1 AND m.seq < $2 AND ${LISTED}`,
      [sessionId, group.seq],
    );
    return before[0]?.seq == null ? { ok: false, why: 'empty' } : { ok: true, seq: before[0].seq };
  }

  /** The last listed assistant message with tool calls at or before `seq`, with its answers counted. */
  private async lastToolGroup(
    sessionId: string,
    seq: number,
  ): Promise<{ seq: number; calls: number; answered: number } | null> {
    const rows: { seq: number; calls: number; answered: string }[] = await this.db.query(
      `SELECT g.seq, g.calls,
              (SELECT count(*) FROM messages t WHERE t.session_id = $1 AND t.role = 'tool'
                  AND t.seq > g.seq AND t.seq <= g.seq + g.calls) AS answered
         FROM (SELECT m.seq, jsonb_array_length(m.tool_calls) AS calls FROM messages m
                WHERE m.session_id = $1 AND m.seq <= $2 AND m.role = 'assistant'
                  AND jsonb_typeof(m.tool_calls) = 'array' AND jsonb_array_length(m.tool_calls) > 0 AND ${LISTED}
                ORDER BY m.seq DESC LIMIT 1) g`,
      [sessionId, seq],
    );
    const row = rows[0];
    return row ? { seq: row.seq, calls: row.calls, answered: Number(row.answered) } : null;
  }

  /**
   * Stores fork `forkId` of the owner's session `sourceId`, cut after position `cut`, in one
   * statement: the session with the source's options and title, and a copy of every listed message
   * up to the cut (new ids; no run of the fork wrote them, so none is named). A summary's span
   * names the copies; a message summarized by a summary the cut leaves out goes back to the model
   * whole. The fork is always a client's (top-level) session: a child session's place in its tree
   * (parent, root, depth) is not copied — that place answers one `delegate` call, and a fork is a
   * conversation a client goes on with. Null when the source is gone.
   */
  async fork(
    owner: string,
    sourceId: string,
    forkId: string,
    cut: number,
    q: Queryable = this.db.manager,
  ): Promise<StoredFork | null> {
    const rows: (SessionRow & { copied: string })[] = await q.query(
      `WITH s AS (
         INSERT INTO sessions (id, owner, ${SESSION_SETTING_COLUMNS}, next_message_seq)
         SELECT $3::uuid, owner, ${SESSION_SETTING_COLUMNS}, floor($4::float8)::int + 1
           FROM sessions WHERE id = $1 AND owner = $2
         RETURNING ${SESSION_COLUMNS}
       ), src AS MATERIALIZED (
         SELECT m.*, gen_random_uuid() AS new_id FROM messages m
          WHERE m.session_id = $1 AND m.seq <= $4::float8 AND EXISTS (SELECT 1 FROM s) AND ${LISTED}
       ), covered AS (
         SELECT coalesce(max(seq), 0) AS seq FROM src WHERE kind = 'summary'
       ), copied AS (
         INSERT INTO messages (id, session_id, seq, role, content, tool_calls, reasoning, provider_data,
                               tool_call_id, parts, context, kind, summarizes, created_at)
         SELECT c.new_id, $3::uuid, c.seq, c.role, c.content, c.tool_calls, c.reasoning, c.provider_data,
                c.tool_call_id, c.parts,
                CASE WHEN c.context = 'summarized' AND c.seq > (SELECT seq FROM covered) THEN NULL ELSE c.context END,
                c.kind,
                CASE WHEN c.summarizes IS NULL THEN NULL ELSE jsonb_build_object(
                  'fromId', (SELECT f.new_id FROM src f WHERE f.id::text = c.summarizes->>'fromId'),
                  'toId', (SELECT t.new_id FROM src t WHERE t.id::text = c.summarizes->>'toId')) END,
                c.created_at
           FROM src c
         RETURNING 1
       )
       SELECT s.*, (SELECT count(*) FROM copied) AS copied FROM s`,
      [sourceId, owner, forkId, cut],
    );
    const row = rows[0];
    if (!row) return null;
    const { copied, ...session } = row;
    return { session, copied: Number(copied) };
  }
}
