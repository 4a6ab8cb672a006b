import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type {
  MessageContextMark,
  MessageRole,
  StoredToolCall,
  SummarizedSpan,
} from '../persistence/entities/message.entity';
import type { ToolCallApproval, ToolCallStatus } from '../persistence/entities/tool-call.entity';
import type { FileChange } from '../common/file-change';
import { returningRows, type Queryable, type SqlStatement } from './run-store.service';

export interface MessageRow {
  id: string;
  seq: number;
  role: MessageRole;
  content: string | null;
  toolCalls: StoredToolCall[] | null;
  toolCallId: string | null;
  runId: string | null;
  createdAt: Date;
  /** An assistant message's reasoning, when the model showed some. */
  reasoning?: string | null;
  /** What the provider that wrote it needs back (sent only to that provider). */
  providerData?: StoredProviderData | null;
  /** What the model no longer gets in full ("Long sessions"); null or absent: all of it. */
  context?: MessageContextMark | null;
  kind?: 'summary' | null;
  summarizes?: SummarizedSpan | null;
  /**
   * A pruned tool result read for a run (`runConversation`): its content is left in the database
   * (null here) and this is its UTF-8 size, all its stub needs.
   */
  prunedBytes?: number | null;
}

/** A provider's opaque data kept with a message (llm's ProviderData). */
export interface StoredProviderData {
  provider: string;
  items: unknown[];
}

/** A summary that stands in for older messages: stored at `seq` (x.5, where the span was). */
export interface NewSummary {
  id: string;
  seq: number;
  content: string;
  summarizes: SummarizedSpan;
}

/** What one compaction marks and adds: it rewrites no message's content. */
export interface CompactionWrite {
  pruned: readonly string[];
  summarized: readonly string[];
  summary: NewSummary | null;
}

export interface ToolCallRow {
  id: string;
  runId: string;
  messageId: string;
  callId: string;
  iteration: number;
  position: number;
  name: string;
  rawArguments: string;
  arguments: unknown;
  executor: 'server' | 'client';
  status: ToolCallStatus;
  approval: ToolCallApproval | null;
  result: string | null;
  isError: boolean;
  errorCode: string | null;
  deadlineAt: Date | null;
  createdAt: Date;
  approvalReason: string | null;
  /** The seq reserved for this call's tool message (its assistant message's seq + position + 1). */
  messageSeq: number;
  sessionId: string;
}

/** A call as the loop decided it: the row's identity and state, with its result when it has one at once. */
export type NewToolCall = Pick<
  ToolCallRow,
  'id' | 'runId' | 'messageId' | 'callId' | 'iteration' | 'position' | 'name' | 'rawArguments' | 'arguments'
> &
  Pick<ToolCallRow, 'executor' | 'status' | 'approvalReason'> & {
    /** How long the call may wait for a person or the client. */
    deadlineMs: number | null;
    settlement: ToolCallSettlement | null;
  };

/** One file a tool call changed, for `GET /v1/sessions/:id/changes`. */
export interface FileChangeRecord {
  toolCallId: string;
  runId: string;
  tool: string;
  path: string;
  beforeSha256: string | null;
  afterSha256: string | null;
  at: Date;
}

export interface NewMessage {
  id?: string;
  seq: number;
  role: MessageRole;
  content: string | null;
  toolCalls?: StoredToolCall[] | null;
  toolCallId?: string | null;
  reasoning?: string | null;
  providerData?: StoredProviderData | null;
}

export interface ToolCallSettlement {
  status: 'completed' | 'error';
  result: string;
  isError: boolean;
  errorCode: string | null;
  truncated: boolean;
  durationMs: number;
  changes: FileChange[] | null;
}

const MESSAGE_COLUMNS = `id, seq, role, content, tool_calls AS "toolCalls", tool_call_id AS "toolCallId",
  run_id AS "runId", created_at AS "createdAt", reasoning, provider_data AS "providerData", context, kind, summarizes`;

/** A message as a run reads it: a pruned tool result without its content, with its size. */
const RUN_MESSAGE_COLUMNS = `id, seq, role, CASE WHEN context = 'pruned' THEN NULL ELSE content END AS content,
  tool_calls AS "toolCalls", tool_call_id AS "toolCallId", run_id AS "runId", created_at AS "createdAt",
  reasoning, provider_data AS "providerData", context, kind, summarizes,
  CASE WHEN context = 'pruned' THEN octet_length(content) END AS "prunedBytes"`;

const TOOL_CALL_COLUMNS = `tc.id, tc.run_id AS "runId", tc.message_id AS "messageId", tc.call_id AS "callId",
  tc.iteration, tc.position, tc.name, tc.raw_arguments AS "rawArguments", tc.arguments, tc.executor,
  tc.status, tc.approval, tc.result, tc.is_error AS "isError", tc.error_code AS "errorCode",
  tc.deadline_at AS "deadlineAt", tc.created_at AS "createdAt", tc.approval_reason AS "approvalReason", m.seq + tc.position + 1 AS "messageSeq", m.session_id AS "sessionId"`;

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
    const { sql, params } = this.insertMessagesSql(sessionId, runId, messages);
    await tx.query(sql, params);
  }

  insertMessagesSql(sessionId: string, runId: string | null, messages: NewMessage[]): SqlStatement {
    return {
      sql: `INSERT INTO messages (id, session_id, run_id, seq, role, content, tool_calls, tool_call_id, reasoning, provider_data)
            SELECT u.id, $1::uuid, $2::uuid, u.seq, u.role, u.content, u.tool_calls::jsonb, u.tool_call_id, u.reasoning,
                   u.provider_data::jsonb
              FROM unnest($3::uuid[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
                AS u(id, seq, role, content, tool_calls, tool_call_id, reasoning, provider_data)`,
      params: [
        sessionId,
        runId,
        messages.map((m) => m.id ?? randomUUID()),
        messages.map((m) => m.seq),
        messages.map((m) => m.role),
        messages.map((m) => m.content),
        messages.map((m) => (m.toolCalls ? JSON.stringify(m.toolCalls) : null)),
        messages.map((m) => m.toolCallId ?? null),
        messages.map((m) => m.reasoning ?? null),
        messages.map((m) => (m.providerData ? JSON.stringify(m.providerData) : null)),
      ],
    };
  }

  /** Moves the session's next message position past what the driving process has written. */
  advanceMessageSeqSql(sessionId: string, nextSeq: number): SqlStatement {
    return {
      sql: `UPDATE sessions SET next_message_seq = GREATEST(next_message_seq, $2::int), updated_at = now() WHERE id = $1::uuid`,
      params: [sessionId, nextSeq],
    };
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

  /**
   * Stores a compaction: the pruned and summarized marks, and the summary in its place. Marks only
   * grow (a summarized message stays summarized; a pruned one may later be summarized).
   */
  async storeCompaction(
    tx: Queryable,
    sessionId: string,
    runId: string | null,
    c: CompactionWrite,
  ): Promise<void> {
    if (c.pruned.length > 0) {
      await tx.query(
        `UPDATE messages SET context = 'pruned' WHERE session_id = $1 AND id = ANY($2::uuid[]) AND context IS NULL`,
        [sessionId, c.pruned],
      );
    }
    if (c.summarized.length > 0) {
      await tx.query(
        `UPDATE messages SET context = 'summarized' WHERE session_id = $1 AND id = ANY($2::uuid[])`,
        [sessionId, c.summarized],
      );
    }
    if (c.summary) {
      await tx.query(
        `INSERT INTO messages (id, session_id, run_id, seq, role, content, kind, summarizes)
         VALUES ($1, $2, $3, $4::float8, 'system', $5, 'summary', $6::jsonb)`,
        [
          c.summary.id,
          sessionId,
          runId,
          c.summary.seq,
          c.summary.content,
          JSON.stringify(c.summary.summarizes),
        ],
      );
    }
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

  insertToolCallsSql(calls: NewToolCall[]): SqlStatement {
    return {
      sql: `INSERT INTO tool_calls (id, run_id, message_id, call_id, iteration, position, name, raw_arguments, arguments,
                               executor, status, deadline_at, result, is_error, error_code, duration_ms, finished_at, approval_reason,
                               started_at)
       SELECT u.id, u.run_id, u.message_id, u.call_id, u.iteration, u.position, u.name, u.raw, u.args::jsonb,
              u.executor, u.status,
              CASE WHEN u.deadline_ms IS NULL THEN NULL ELSE now() + u.deadline_ms * interval '1 millisecond' END,
              u.result, coalesce(u.is_error, false), u.error_code, u.duration_ms,
              CASE WHEN u.result IS NULL THEN NULL ELSE now() END, u.approval_reason,
              CASE WHEN u.status = 'running' THEN now() END
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::int[], $6::int[], $7::text[], $8::text[],
                     $9::text[], $10::text[], $11::text[], $12::int[], $13::text[], $14::bool[], $15::text[], $16::int[], $17::text[])
           AS u(id, run_id, message_id, call_id, iteration, position, name, raw, args, executor, status,
                deadline_ms, result, is_error, error_code, duration_ms, approval_reason)`,
      params: [
        calls.map((c) => c.id),
        calls.map((c) => c.runId),
        calls.map((c) => c.messageId),
        calls.map((c) => c.callId),
        calls.map((c) => c.iteration),
        calls.map((c) => c.position),
        calls.map((c) => c.name),
        calls.map((c) => c.rawArguments),
        calls.map((c) => (c.arguments === undefined ? null : JSON.stringify(c.arguments))),
        calls.map((c) => c.executor),
        calls.map((c) => c.status),
        calls.map((c) => c.deadlineMs),
        calls.map((c) => c.settlement?.result ?? null),
        calls.map((c) => c.settlement?.isError ?? null),
        calls.map((c) => c.settlement?.errorCode ?? null),
        calls.map((c) => c.settlement?.durationMs ?? null),
        calls.map((c) => c.approvalReason),
      ],
    };
  }

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

  async countWaitingToolCalls(tx: Queryable, runId: string): Promise<number> {
    const rows: { n: string }[] = await tx.query(
      `SELECT count(*) AS n FROM tool_calls WHERE run_id = $1 AND status IN ('pending_approval', 'awaiting_client')`,
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
    for (const { sql, params } of this.settleToolCallSql(call, s, extra)) await tx.query(sql, params);
  }

  /** A call's result: the call's row, and its tool message at the position reserved for it. */
  settleToolCallSql(
    call: Pick<ToolCallRow, 'id' | 'callId' | 'messageSeq' | 'sessionId' | 'runId'>,
    s: ToolCallSettlement,
    extra: { approval?: ToolCallApproval; messageId?: string } = {},
  ): SqlStatement[] {
    return [
      {
        sql: `UPDATE tool_calls SET status = $2, result = $3, is_error = $4, error_code = $5, truncated = $6,
                     duration_ms = $7, changes = $8::jsonb, finished_at = now(), deadline_at = NULL,
                     approval = coalesce($9::jsonb, approval)
               WHERE id = $1::uuid`,
        params: [
          call.id,
          s.status,
          s.result,
          s.isError,
          s.errorCode,
          s.truncated,
          s.durationMs,
          s.changes ? JSON.stringify(s.changes) : null,
          extra.approval ? JSON.stringify(extra.approval) : null,
        ],
      },
      this.insertMessagesSql(call.sessionId, call.runId, [
        {
          id: extra.messageId,
          seq: call.messageSeq,
          role: 'tool',
          content: s.result,
          toolCallId: call.callId,
        },
      ]),
    ];
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
