/**
 * Reading the one message of a useChat request that matters (the last): a user prompt, or the
 * approval responses and client tool outputs of the assistant message.
 */

export type LastMessage =
  { kind: 'prompt'; text: string } | { kind: 'decisions'; decisions: ToolPartDecision[] } | { kind: 'none' };

export type ToolPartDecision =
  | { toolCallId: string; kind: 'approval'; approve: boolean; reason?: string }
  | { toolCallId: string; kind: 'result'; content: string; isError: boolean };

export function readLastMessage(messages: readonly Record<string, unknown>[]): LastMessage {
  const last = messages[messages.length - 1];
  const parts = Array.isArray(last?.parts) ? (last.parts as unknown[]).filter(isObject) : [];
  if (last?.role === 'user') {
    const text = parts
      .filter((p) => p.type === 'text' && typeof p.text === 'string')
      .map((p) => p.text as string)
      .join('\n');
    return text.trim() === '' ? { kind: 'none' } : { kind: 'prompt', text };
  }
  if (last?.role === 'assistant') {
    const decisions: ToolPartDecision[] = [];
    for (const p of parts) {
      const isTool = typeof p.type === 'string' && (p.type.startsWith('tool-') || p.type === 'dynamic-tool');
      if (!isTool || typeof p.toolCallId !== 'string') continue;
      if (
        p.state === 'approval-responded' &&
        isObject(p.approval) &&
        typeof p.approval.approved === 'boolean'
      ) {
        decisions.push({
          toolCallId: p.toolCallId,
          kind: 'approval',
          approve: p.approval.approved,
          ...(typeof p.approval.reason === 'string' ? { reason: p.approval.reason } : {}),
        });
      } else if (p.state === 'output-available') {
        decisions.push({
          toolCallId: p.toolCallId,
          kind: 'result',
          content: asText(p.output),
          isError: false,
        });
      } else if (p.state === 'output-error') {
        decisions.push({
          toolCallId: p.toolCallId,
          kind: 'result',
          content: asText(p.errorText),
          isError: true,
        });
      }
    }
    return { kind: 'decisions', decisions };
  }
  return { kind: 'none' };
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined ? '' : JSON.stringify(value);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
