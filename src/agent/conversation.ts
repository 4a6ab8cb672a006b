import type { ModelMessage } from '../llm/model-provider';
import type { MessageRow } from '../store/conversation-store.service';

export interface HistoryBudget {
  maxMessages: number;
  maxTokens: number;
}

/** A rough token estimate (4 characters a token): good enough to keep a request within reach. */
function estimateTokens(m: MessageRow): number {
  let chars = m.content?.length ?? 0;
  for (const c of m.toolCalls ?? []) chars += c.name.length + c.arguments.length;
  return Math.ceil(chars / 4) + 4;
}

/**
 * The conversation the model is sent: the system message, then as many of the newest turns as fit
 * the budget. Turns are left out whole and oldest first — an assistant message with tool calls and
 * its tool results are one unit — and the current run's messages (from `keepFromSeq`) always stay.
 */
export function buildModelMessages(
  rows: readonly MessageRow[],
  budget: HistoryBudget,
  keepFromSeq: number,
): { messages: ModelMessage[]; omitted: number } {
  const system = rows[0]?.role === 'system' ? rows[0] : null;
  const rest = system ? rows.slice(1) : rows;

  // Units, newest first.
  const units: MessageRow[][] = [];
  for (let i = rest.length - 1; i >= 0;) {
    let start = i;
    while (start > 0 && rest[start].role === 'tool') start--;
    units.push(rest.slice(start, i + 1));
    i = start - 1;
  }

  let count = system ? 1 : 0;
  let tokens = system ? estimateTokens(system) : 0;
  let kept = 0;
  for (const unit of units) {
    const unitTokens = unit.reduce((n, m) => n + estimateTokens(m), 0);
    const mustKeep = unit[unit.length - 1].seq >= keepFromSeq;
    if (!mustKeep && (count + unit.length > budget.maxMessages || tokens + unitTokens > budget.maxTokens))
      break;
    count += unit.length;
    tokens += unitTokens;
    kept++;
  }

  const included = units.slice(0, kept).reverse().flat();
  const messages: ModelMessage[] = [];
  if (system) messages.push({ role: 'system', content: system.content ?? '' });
  for (const m of included) messages.push(toModelMessage(m));
  return { messages, omitted: rest.length - included.length };
}

function toModelMessage(m: MessageRow): ModelMessage {
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
    case 'tool':
      return { role: 'tool', toolCallId: m.toolCallId ?? '', content: m.content ?? '' };
  }
}
