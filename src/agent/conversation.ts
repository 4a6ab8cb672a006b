import type { ModelMessage } from '../llm/model-provider';
import type { MessageRow } from '../store/conversation-store.service';

/**
 * The conversation the model gets ("Long sessions"): the session's messages that are not
 * summarized, in order, each pruned tool result as its stub. `GET /v1/sessions/:id` lists the same
 * messages with the same marks, so a client replaying it sees exactly this.
 */
export function modelMessages(rows: readonly MessageRow[]): ModelMessage[] {
  const names = toolNames(rows);
  const messages: ModelMessage[] = [];
  for (const m of rows) {
    if (m.context === 'summarized') continue;
    messages.push(toModelMessage(m, names));
  }
  return messages;
}

/** What the model gets in place of a pruned tool result of `bytes` (its content's UTF-8 size). */
export function prunedStub(toolName: string, bytes: number): string {
  const kb = Math.max(1, Math.round(bytes / 1024));
  return `[output of ${toolName} pruned to save context: ${kb} KB; call the tool again to see it]`;
}

/** The tool name of every call in `rows`, by call id (a pruned result's stub names its tool). */
export function toolNames(rows: readonly MessageRow[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of rows) for (const c of m.toolCalls ?? []) names.set(c.id, c.name);
  return names;
}

export function toModelMessage(m: MessageRow, names: ReadonlyMap<string, string>): ModelMessage {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content ?? '' };
    case 'user':
      return { role: 'user', content: m.content ?? '' };
    case 'assistant':
      return {
        role: 'assistant',
        ...(m.toolCalls && m.toolCalls.length > 0
          ? { content: m.content, toolCalls: m.toolCalls }
          : { content: m.content ?? '' }),
        ...(m.reasoning ? { reasoning: m.reasoning } : {}),
        ...(m.providerData ? { providerData: m.providerData } : {}),
      };
    case 'tool': {
      const toolCallId = m.toolCallId ?? '';
      const content =
        m.context === 'pruned'
          ? prunedStub(names.get(toolCallId) ?? 'the tool', contentBytes(m))
          : (m.content ?? '');
      return { role: 'tool', toolCallId, content };
    }
  }
}

/** The UTF-8 size of a message's stored content (known without it for a pruned row read without it). */
export function contentBytes(m: MessageRow): number {
  return m.prunedBytes ?? Buffer.byteLength(m.content ?? '', 'utf8');
}
