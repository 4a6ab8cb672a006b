import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { ToolCallApproval, ToolCallStatus } from '../persistence/entities/tool-call.entity';
import { claimCompaction, releaseCompaction, type CompactionClaim } from './compaction-claim';
import { compactionSql, type CompactionWrite } from './compaction-write';
import { insertMessagesSql, type NewMessage } from './message-inserts';
import { MESSAGE_COLUMNS, RUN_MESSAGE_COLUMNS, type MessageRow } from './message-row';
import { returningRows, type Queryable } from './run-store.service';
import { runBuilt } from './params';
import { withCtes } from './store-sql';
import { TOOL_CALL_COLUMNS, type FileChangeRecord, type ToolCallRow } from './tool-call-row';
import { settleToolCallSql, type ToolCallSettlement } from './tool-call-writes';

// The conversation's types live beside the SQL that reads or writes them; callers import them from here.
export type { CompactionClaim } from './compaction-claim';
export type { CompactionWrite, NewSummary } from './compaction-write';
export type { NewMessage } from './message-inserts';
export type { MessageRow, StoredProviderData } from './message-row';
export type { FileChangeRecord, ToolCallRow } from './tool-call-row';
export type { CallSettlement, NewToolCall, ToolCallSettlement } from './tool-call-writes';

/** The statuses of a call waiting for a person or the client, as SQL. */
const WAITING = `('pending_approval', 'awaiting_client')`;

/**
 * What a conversation is made of: messages in their order, and the tool calls of assistant messages
 * with their state and results. Hand-written SQL; every write takes the caller's transaction.
 */
@Injectable()
export class ConversationStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  // ── messages ──────────────────────────────────────────────────────────────

  /** Reserves `count` consecutive message positions in the session and returns the first. */
  async reserveMessageSeqs(tx: Queryable, sessionId: string, count: number): Promise<number> {
    const rows = returningRows<{ firstSeq: number }>(
      await tx.query(
        `UPDATE sessions SET next_message_seq = next_message_seq + $2::int, updated_at = now()
          WHERE id = $1 RETURNING next_message_seq - $2::int AS "firstSeq"`,
        [sessionId, count],
      ),
    );
    if (!rows[0]) throw new Error(`session ${sessionId} vanished`);
    return rows[0].firstSeq;
  }

  async insertMessages(
    tx: Queryable,
    sessionId: string,
    runId: string | null,
    messages: NewMessage[],
  ): Promise<void> {
    if (messages.length === 0) return;
    await runBuilt(tx, (p) => insertMessagesSql(p, sessionId, runId, messages));
  }

  /** Every message of the session in order, for `GET /v1/sessions/:id`. */
  async sessionMessages(sessionId: string, q: Queryable = this.db.manager): Promise<MessageRow[]> {
    return this.messagesOf(sessionId, q, true);
  }

  /**
   * The session's messages a run works from: all but those a summary stands in for (the model never
   * gets them again), and pruned tool results without their content (`prunedBytes`), so what a run
   * reads stays about the size of the model's window however long the session grows.
   */
  async runConversation(sessionId: string, q: Queryable = this.db.manager): Promise<MessageRow[]> {
    return this.messagesOf(sessionId, q, false);
  }

  private messagesOf(sessionId: string, q: Queryable, whole: boolean): Promise<MessageRow[]> {
    // The answers of a prompt that was answered again (regenerated) are no longer the conversation.
    return q.query(
      `SELECT ${whole ? MESSAGE_COLUMNS : RUN_MESSAGE_COLUMNS} FROM messages m
        WHERE m.session_id = $1
          AND ($2::bool OR m.context IS DISTINCT FROM 'summarized')
          AND (m.role = 'user' OR NOT EXISTS (
                SELECT 1 FROM runs r WHERE r.id = m.run_id AND r.superseded_by IS NOT NULL))
        ORDER BY seq`,
      [sessionId, whole],
    );
  }

  /** Stores a compaction (compaction-write.ts) in one statement, in the caller's transaction. */
  async storeCompaction(
    tx: Queryable,
    sessionId: string,
    runId: string | null,
    c: CompactionWrite,
  ): Promise<void> {
    await runBuilt(tx, (p) => withCtes(compactionSql(p, sessionId, runId, c), 'SELECT 1'));
  }

  /** The session's on-demand compaction, claimed before its model call (compaction-claim.ts); null: refused. */
  claimCompaction(sessionId: string): Promise<CompactionClaim | null> {
    return claimCompaction(this.db.manager, sessionId);
  }

  /** Lets the claim go (in `q`'s transaction when given); false when it no longer held. */
  releaseCompaction(
    sessionId: string,
    claim: CompactionClaim,
    q: Queryable = this.db.manager,
  ): Promise<boolean> {
    return releaseCompaction(q, sessionId, claim);
  }

  /**
   * Locks the session's row for the rest of the transaction (a run's start waits behind it) and says
   * where its conversation stands: its next free position and its active run, if any.
   */
  async lockSession(
    tx: Queryable,
    sessionId: string,
  ): Promise<{ nextMessageSeq: number; activeRunId: string | null } | null> {
    const rows: { nextMessageSeq: number; activeRunId: string | null }[] = await tx.query(
      `SELECT s.next_message_seq AS "nextMessageSeq",
              (SELECT r.id FROM runs r WHERE r.session_id = s.id AND r.status IN ('running', 'requires_action')
                LIMIT 1) AS "activeRunId"
         FROM sessions s WHERE s.id = $1 FOR UPDATE`,
      [sessionId],
    );
    return rows[0] ?? null;
  }

  /** The newest assistant message of a run, for `done.messageId` when the run ends without a text answer. */
  async lastAssistantMessageId(tx: Queryable, runId: string): Promise<string | null> {
    const rows: { id: string }[] = await tx.query(
      `SELECT id FROM messages WHERE run_id = $1 AND role = 'assistant' ORDER BY seq DESC LIMIT 1`,
      [runId],
    );
    return rows[0]?.id ?? null;
  }

  // ── tool calls ────────────────────────────────────────────────────────────

  /** The calls of the run that have no result yet (the open step), in the order the model asked. */
  async unsettledToolCalls(q: Queryable, runId: string): Promise<ToolCallRow[]> {
    return q.query(
      `SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls tc JOIN messages m ON m.id = tc.message_id
        WHERE tc.run_id = $1 AND tc.status NOT IN ('completed', 'error')
        ORDER BY tc.iteration, tc.position`,
      [runId],
    );
  }

  /** Every call of the session's runs, in the order they were asked: for a frontend's stored conversation. */
  async sessionToolCalls(sessionId: string, q: Queryable = this.db.manager): Promise<ToolCallRow[]> {
    return q.query(
      `SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls tc JOIN messages m ON m.id = tc.message_id
        WHERE m.session_id = $1
        ORDER BY m.seq, tc.position`,
      [sessionId],
    );
  }

  async findToolCall(q: Queryable, runId: string, callId: string): Promise<ToolCallRow | null> {
    const rows: ToolCallRow[] = await q.query(
      `SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls tc JOIN messages m ON m.id = tc.message_id
        WHERE tc.run_id = $1 AND tc.call_id = $2`,
      [runId, callId],
    );
    return rows[0] ?? null;
  }

  /** Every call of the run so far (name, arguments): for the doom-loop check and id uniqueness. */
  async runToolCallKeys(runId: string): Promise<{ callId: string; name: string; rawArguments: string }[]> {
    return this.db.query(
      `SELECT call_id AS "callId", name, raw_arguments AS "rawArguments" FROM tool_calls WHERE run_id = $1`,
      [runId],
    );
  }

  /**
   * The calls waiting for a person or the client in the run and in every run below it (its child
   * runs, theirs…): a child's approvals are its ancestors' ("Agents and delegation"). With `callId`:
   * the calls of that id in the tree, whatever their status, those waiting first, the run's own first.
   */
  async waitingCallsBelow(q: Queryable, runId: string, callId?: string): Promise<ToolCallRow[]> {
    return q.query(
      `WITH RECURSIVE tree(run_id, depth) AS (
         SELECT $1::uuid, 0
         UNION ALL
         SELECT r.id, t.depth + 1 FROM tree t
           JOIN sessions s ON s.parent_run_id = t.run_id JOIN runs r ON r.session_id = s.id
          WHERE t.depth < 64
       )
       SELECT ${TOOL_CALL_COLUMNS} FROM tree JOIN tool_calls tc ON tc.run_id = tree.run_id
         JOIN messages m ON m.id = tc.message_id
        WHERE ${callId === undefined ? `tc.status IN ${WAITING}` : 'tc.call_id = $2'}
        ORDER BY tc.status IN ${WAITING} DESC, tree.depth, tc.created_at, tc.iteration, tc.position`,
      callId === undefined ? [runId] : [runId, callId],
    );
  }

  /** Runs waiting in `requires_action` for a child run (a `delegate` call): what Delegations moves on. */
  async runsAwaitingChildren(q: Queryable): Promise<string[]> {
    const rows: { runId: string }[] = await q.query(
      `SELECT DISTINCT tc.run_id AS "runId" FROM tool_calls tc JOIN runs r ON r.id = tc.run_id
        WHERE tc.status = 'awaiting_child' AND r.status = 'requires_action'`,
    );
    return rows.map((r) => r.runId);
  }

  async countWaitingToolCalls(tx: Queryable, runId: string): Promise<number> {
    const rows: { n: string }[] = await tx.query(
      `SELECT count(*) AS n FROM tool_calls WHERE run_id = $1 AND status IN ('pending_approval', 'awaiting_client', 'awaiting_child')`,
      [runId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async markToolCalls(
    tx: Queryable,
    ids: string[],
    status: ToolCallStatus,
    startedNow = false,
  ): Promise<void> {
    if (ids.length === 0) return;
    await tx.query(
      `UPDATE tool_calls SET status = $2 ${startedNow ? ', started_at = now()' : ''} WHERE id = ANY($1::uuid[])`,
      [ids, status],
    );
  }

  async approveToolCall(
    tx: Queryable,
    id: string,
    approval: ToolCallApproval,
    editedArguments: unknown,
  ): Promise<void> {
    await tx.query(
      `UPDATE tool_calls SET status = 'approved', approval = $2::jsonb,
              arguments = CASE WHEN $3::jsonb IS NULL THEN arguments ELSE $3::jsonb END, deadline_at = NULL
        WHERE id = $1`,
      [id, JSON.stringify(approval), editedArguments === undefined ? null : JSON.stringify(editedArguments)],
    );
  }

  async settleToolCall(
    tx: Queryable,
    call: Pick<ToolCallRow, 'id' | 'callId' | 'messageSeq' | 'sessionId' | 'runId'>,
    s: ToolCallSettlement,
    extra: { approval?: ToolCallApproval; messageId?: string } = {},
  ): Promise<void> {
    await runBuilt(tx, (p) => withCtes(settleToolCallSql(p, { call, settlement: s, ...extra }), 'SELECT 1'));
  }

  /** Every file change the session's tool calls made, oldest first. */
  async sessionChanges(sessionId: string): Promise<FileChangeRecord[]> {
    return this.db.query(
      `SELECT tc.call_id AS "toolCallId", tc.run_id AS "runId", tc.name AS "tool",
              c.path, c."beforeSha256", c."afterSha256", tc.finished_at AS "at"
         FROM tool_calls tc
         JOIN runs r ON r.id = tc.run_id
         CROSS JOIN LATERAL jsonb_to_recordset(tc.changes) AS c(path text, "beforeSha256" text, "afterSha256" text)
        WHERE r.session_id = $1 AND tc.changes IS NOT NULL
        ORDER BY tc.finished_at, tc.position`,
      [sessionId],
    );
  }

  /** Waiting calls whose deadline passed, locked so that one process settles each. */
  async expiredWaitingCalls(tx: Queryable, limit = 50): Promise<{ runId: string; callId: string }[]> {
    return tx.query(
      `SELECT run_id AS "runId", call_id AS "callId" FROM tool_calls
        WHERE status IN ('pending_approval', 'awaiting_client') AND deadline_at < now()
        ORDER BY deadline_at LIMIT $1`,
      [limit],
    );
  }
}
