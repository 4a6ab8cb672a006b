// The stored form of a call's result: its settlement, its `tool_call_result` event, its tool message.
import { randomUUID } from 'node:crypto';
import type { RunEventBody } from '../events/run-events';
import type { StoredMessagePart } from '../persistence/entities/message.entity';
import type { ToolCallRow, ToolCallSettlement } from '../store/conversation-store.service';
import type { ToolErrorCode } from '../tools/tool';

/** A call answered with an error without running (refused, timed out waiting, abandoned). */
export function errorSettlement(code: ToolErrorCode, message: string): ToolCallSettlement {
  return {
    status: 'error',
    result: message,
    isError: true,
    errorCode: code,
    truncated: false,
    durationMs: 0,
    changes: null,
  };
}

export function resultEvent(toolCallId: string, name: string, s: ToolCallSettlement): RunEventBody {
  return {
    type: 'tool_call_result',
    toolCallId,
    name,
    content: s.result,
    isError: s.isError,
    durationMs: s.durationMs,
    ...(s.errorCode ? { errorCode: s.errorCode } : {}),
    ...(s.truncated ? { truncated: true } : {}),
  };
}

export function toolMessage(
  runId: string,
  call: Pick<ToolCallRow, 'callId' | 'messageSeq'>,
  content: string,
  parts: StoredMessagePart[] | null = null,
) {
  return {
    id: randomUUID(),
    seq: call.messageSeq,
    role: 'tool' as const,
    content,
    toolCalls: null,
    toolCallId: call.callId,
    parts,
    runId,
    createdAt: new Date(),
  };
}
