import type { Message, RunAgentInput } from '@ag-ui/core';
import type { ClientToolDefinition } from '../../persistence/entities/session.entity';

export type AgUiTurn =
  | { kind: 'prompt'; text: string }
  | { kind: 'results'; results: { toolCallId: string; content: string; isError: boolean }[] }
  /** No new user message: the thread's run goes on from where the client's last stream ended. */
  | { kind: 'continue' }
  | { kind: 'none' };

/**
 * What an input asks for: tool messages at the end answer waiting client calls; an assistant message
 * at the end (what the client kept of the last stream) asks for the rest of the thread's run;
 * otherwise the last user message is the prompt, with the input's context as `description: value`
 * lines after it.
 */
export function readAgUiTurn(input: RunAgentInput): AgUiTurn {
  const trailing: Extract<Message, { role: 'tool' }>[] = [];
  for (let i = input.messages.length - 1; i >= 0; i--) {
    const m = input.messages[i];
    if (m.role !== 'tool') break;
    trailing.unshift(m);
  }
  if (trailing.length > 0) {
    return {
      kind: 'results',
      results: trailing.map((m) => ({
        toolCallId: m.toolCallId,
        content: m.error ?? contentText(m.content),
        isError: m.error !== undefined,
      })),
    };
  }
  if (input.messages.at(-1)?.role === 'assistant') return { kind: 'continue' };
  const user = [...input.messages].reverse().find((m) => m.role === 'user');
  const text = user ? contentText(user.content) : '';
  if (text.trim() === '') return { kind: 'none' };
  const context = input.context.map((c) => `${c.description}: ${c.value}`);
  return { kind: 'prompt', text: context.length > 0 ? `${text}\n\n${context.join('\n')}` : text };
}

/** The input's tools as the session's client tools (OpenAI function definitions). */
export function clientToolsOf(input: RunAgentInput): ClientToolDefinition[] {
  return input.tools.map((t) => ({
    type: 'function',
    function: {
      name: t.name,
      description: t.description,
      ...(t.parameters !== undefined ? { parameters: t.parameters as Record<string, unknown> } : {}),
    },
  }));
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as unknown[])
    .filter(
      (p): p is { type: 'text'; text: string } =>
        typeof p === 'object' &&
        p !== null &&
        (p as { type?: unknown }).type === 'text' &&
        typeof (p as { text?: unknown }).text === 'string',
    )
    .map((p) => p.text)
    .join('\n');
}
