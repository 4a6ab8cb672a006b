import type { DynamicToolUIPart, UIMessage, UIMessagePart, UIDataTypes, UITools } from 'ai' with {
  'resolution-mode': 'import',
};
import type { MessageRow, ToolCallRow } from '../../store/conversation-store.service';
import type { LoopwrightMessageMetadata } from './ui-message-projection';

export type LoopwrightUiMessage = UIMessage<LoopwrightMessageMetadata>;
type Part = UIMessagePart<UIDataTypes, UITools>;

/**
 * A chat's stored conversation as the `UIMessage[]` that `useChat({ messages })` takes after a reload:
 * the parts the stream projection (ui-message-projection.ts) would have left in the client's messages.
 * A run's assistant and tool messages are one UI message whose id is the run id (the stream's
 * `messageId`), a step per assistant message; a call's part is in its state now (a waiting approval
 * stays `approval-requested`, a client call without result `input-available`).
 */
export function storedUiMessages(
  sessionId: string,
  messages: readonly MessageRow[],
  calls: readonly ToolCallRow[],
): LoopwrightUiMessage[] {
  const callsById = new Map(calls.map((c) => [`${c.messageId}/${c.callId}`, c]));
  const out: LoopwrightUiMessage[] = [];
  let current = null as LoopwrightUiMessage | null;
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'tool') continue;
    if (m.role === 'user') {
      current = null;
      out.push({ id: m.id, role: 'user', parts: userParts(m) });
      continue;
    }
    const runId = m.runId ?? m.id;
    if (current?.id !== runId) {
      current = { id: runId, role: 'assistant', metadata: { runId, sessionId }, parts: [] };
      out.push(current);
    }
    current.parts.push({ type: 'step-start' });
    if (m.content) current.parts.push({ type: 'text', text: m.content, state: 'done' });
    for (const stored of m.toolCalls ?? []) {
      const call = callsById.get(`${m.id}/${stored.id}`);
      if (call) current.parts.push(toolPart(call));
    }
  }
  return out;
}

/** One call as the tool part the stream's chunks leave: `dynamic-tool` for a server tool, `tool-<name>` for a client's. */
function toolPart(c: ToolCallRow): Part {
  const base = { toolCallId: c.callId, input: c.arguments ?? c.rawArguments };
  const approval = c.approval ? { id: c.callId, approved: c.approval.approved } : undefined;
  let state: DynamicToolUIPart;
  if (c.status === 'completed' || c.status === 'error') {
    const result = c.result ?? '';
    if (c.errorCode === 'REJECTED') {
      state = {
        ...base,
        toolName: c.name,
        type: 'dynamic-tool',
        state: 'output-denied',
        approval: {
          id: c.callId,
          approved: false,
          ...(c.approval?.reason ? { reason: c.approval.reason } : {}),
        },
      };
    } else if (c.isError) {
      state = {
        ...base,
        toolName: c.name,
        type: 'dynamic-tool',
        state: 'output-error',
        errorText: result,
        ...(approval?.approved ? { approval: { id: c.callId, approved: true } } : {}),
      };
    } else {
      state = {
        ...base,
        toolName: c.name,
        type: 'dynamic-tool',
        state: 'output-available',
        output: result,
        ...(approval?.approved ? { approval: { id: c.callId, approved: true } } : {}),
      };
    }
  } else if (c.status === 'pending_approval') {
    state = {
      ...base,
      toolName: c.name,
      type: 'dynamic-tool',
      state: 'approval-requested',
      approval: { id: c.callId },
    };
  } else {
    state = { ...base, toolName: c.name, type: 'dynamic-tool', state: 'input-available' };
  }
  if (c.executor === 'server') return state;
  // A client tool is a static part named after the tool, as `tool-input-available` without `dynamic` makes it.
  const { type: _, toolName: __, ...rest } = state;
  return { ...rest, type: `tool-${c.name}` };
}

/** A user message's parts as useChat shows them: its text, and its files by their URL on this server. */
function userParts(m: MessageRow): Part[] {
  if (!m.parts) return [{ type: 'text', text: m.content ?? '' }];
  return m.parts.map((p): Part =>
    p.type === 'text'
      ? { type: 'text', text: p.text }
      : { type: 'file', mediaType: p.mediaType, filename: p.name, url: `/v1/files/${p.fileId}` },
  );
}
