import type { FileChange } from '../common/file-change';
import type { StoredMessagePart } from '../persistence/entities/message.entity';
import type { ToolCallApproval } from '../persistence/entities/tool-call.entity';
import { insertMessagesSql } from './message-inserts';
import type { Params } from './params';
import type { ToolCallRow } from './tool-call-row';

/*
 * The statements that store a step's tool calls and their results, built into the caller's
 * parameters but not run: the caller runs them in its transaction, or folds them with a step's
 * other writes and events into one statement (RunJournal).
 */

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

/** A call's result as the runner produced it: what its row and its tool message record. */
export interface ToolCallSettlement {
  status: 'completed' | 'error';
  result: string;
  isError: boolean;
  errorCode: string | null;
  truncated: boolean;
  durationMs: number;
  changes: FileChange[] | null;
  /** Its tool message's parts when the result carries a file (its text, then the file's reference). */
  parts?: StoredMessagePart[] | null;
}

/**
 * Stores the step's calls in one statement however many there are. A call decided with its result
 * (`settlement`) is stored finished, a `running` one started; `deadlineMs` becomes a deadline on
 * the database's clock.
 */
export function insertToolCallsSql(p: Params, calls: NewToolCall[]): string {
  const columns: [unknown[], string][] = [
    [calls.map((c) => c.id), 'uuid'],
    [calls.map((c) => c.runId), 'uuid'],
    [calls.map((c) => c.messageId), 'uuid'],
    [calls.map((c) => c.callId), 'text'],
    [calls.map((c) => c.iteration), 'int'],
    [calls.map((c) => c.position), 'int'],
    [calls.map((c) => c.name), 'text'],
    [calls.map((c) => c.rawArguments), 'text'],
    [calls.map((c) => (c.arguments === undefined ? null : JSON.stringify(c.arguments))), 'text'],
    [calls.map((c) => c.executor), 'text'],
    [calls.map((c) => c.status), 'text'],
    [calls.map((c) => c.deadlineMs), 'int'],
    [calls.map((c) => c.settlement?.result ?? null), 'text'],
    [calls.map((c) => c.settlement?.isError ?? null), 'bool'],
    [calls.map((c) => c.settlement?.errorCode ?? null), 'text'],
    [calls.map((c) => c.settlement?.durationMs ?? null), 'int'],
    [calls.map((c) => c.approvalReason), 'text'],
  ];
  return `INSERT INTO tool_calls (id, run_id, message_id, call_id, iteration, position, name, raw_arguments, arguments,
                               executor, status, deadline_at, result, is_error, error_code, duration_ms, finished_at, approval_reason,
                               started_at)
       SELECT u.id, u.run_id, u.message_id, u.call_id, u.iteration, u.position, u.name, u.raw, u.args::jsonb,
              u.executor, u.status,
              CASE WHEN u.deadline_ms IS NULL THEN NULL ELSE now() + u.deadline_ms * interval '1 millisecond' END,
              u.result, coalesce(u.is_error, false), u.error_code, u.duration_ms,
              CASE WHEN u.result IS NULL THEN NULL ELSE now() END, u.approval_reason,
              CASE WHEN u.status = 'running' THEN now() END
         FROM unnest(${columns.map(([values, type]) => `${p.add(values)}::${type}[]`).join(', ')})
           AS u(id, run_id, message_id, call_id, iteration, position, name, raw, args, executor, status,
                deadline_ms, result, is_error, error_code, duration_ms, approval_reason)`;
}

/** A call's result as a write: the call's row, and its tool message at the position reserved for it. */
export interface CallSettlement {
  call: Pick<ToolCallRow, 'id' | 'callId' | 'messageSeq' | 'sessionId' | 'runId'>;
  settlement: ToolCallSettlement;
  approval?: ToolCallApproval;
  /** The tool message's id (drawn when absent). */
  messageId?: string;
}

/** The two statements of a call's result: its row's update, then its tool message. */
export function settleToolCallSql(
  p: Params,
  { call, settlement: s, approval, messageId }: CallSettlement,
): string[] {
  return [
    `UPDATE tool_calls SET status = ${p.add(s.status)}, result = ${p.add(s.result)}, is_error = ${p.add(s.isError)},
                     error_code = ${p.add(s.errorCode)}, truncated = ${p.add(s.truncated)},
                     duration_ms = ${p.add(s.durationMs)}, changes = ${p.add(s.changes ? JSON.stringify(s.changes) : null)}::jsonb,
                     finished_at = now(), deadline_at = NULL,
                     approval = coalesce(${p.add(approval ? JSON.stringify(approval) : null)}::jsonb, approval)
               WHERE id = ${p.add(call.id)}::uuid`,
    insertMessagesSql(p, call.sessionId, call.runId, [
      {
        id: messageId,
        seq: call.messageSeq,
        role: 'tool',
        content: s.result,
        toolCallId: call.callId,
        parts: s.parts ?? null,
      },
    ]),
  ];
}
