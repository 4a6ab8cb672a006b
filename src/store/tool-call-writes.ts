import type { FileChange } from '../common/file-change';
import type { ToolCallApproval } from '../persistence/entities/tool-call.entity';
import { insertMessagesSql } from './message-inserts';
import type { SqlStatement } from './run-store.service';
import type { ToolCallRow } from './tool-call-row';

/*
 * The statements that store a step's tool calls and their results, built but not run: the caller
 * runs them in its transaction, or folds them with a step's other writes and events into one
 * statement (RunStore.writeWithEvents).
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
}

/**
 * Stores the step's calls in one statement however many there are. A call decided with its result
 * (`settlement`) is stored finished, a `running` one started; `deadlineMs` becomes a deadline on
 * the database's clock.
 */
export function insertToolCallsSql(calls: NewToolCall[]): SqlStatement {
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

/** A call's result: the call's row, and its tool message at the position reserved for it. */
export function settleToolCallSql(
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
    insertMessagesSql(call.sessionId, call.runId, [
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
