import type { ToolCallApproval, ToolCallStatus } from '../persistence/entities/tool-call.entity';

/*
 * A tool call as the store hands it out, and the column list that selects a `tool_calls` row (joined
 * to its assistant message as `m`) into that shape: the type and its SQL aliases change together.
 */

/** A tool call of an assistant message, with its state and result. */
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

/**
 * Every column of a call, read from `tool_calls tc JOIN messages m ON m.id = tc.message_id`: the join
 * gives the seq reserved for its tool message and its session.
 */
export const TOOL_CALL_COLUMNS = `tc.id, tc.run_id AS "runId", tc.message_id AS "messageId", tc.call_id AS "callId",
  tc.iteration, tc.position, tc.name, tc.raw_arguments AS "rawArguments", tc.arguments, tc.executor,
  tc.status, tc.approval, tc.result, tc.is_error AS "isError", tc.error_code AS "errorCode",
  tc.deadline_at AS "deadlineAt", tc.created_at AS "createdAt", tc.approval_reason AS "approvalReason", m.seq + tc.position + 1 AS "messageSeq", m.session_id AS "sessionId"`;
