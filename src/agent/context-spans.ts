import type { ModelMessage } from '../llm/model-provider';
import type { MessageRow } from '../store/conversation-store.service';
import { toModelMessage } from './conversation';

/*
 * The parts of a conversation a compaction works on (ContextWindow): where a summary may cut, what
 * the summarizer reads of the span, and the rows as they stand once some are pruned. Pure functions.
 */

/**
 * The oldest part of the conversation to summarize: from the first message the model still gets
 * (after the session's own system message) to a cut point — before a user message, or before an
 * assistant message once every tool call in the span has its result in the span — at or before the
 * newest user message. The cut is the oldest one that leaves at most `keepTokens` after it (the
 * newest user message's at the latest). Null when there is nothing (new) to summarize.
 */
export function summarySpan(
  rows: readonly MessageRow[],
  keepTokens: number,
  tokensOf: (m: MessageRow) => number,
): MessageRow[] | null {
  const live = rows.filter(
    (m, i) => m.context !== 'summarized' && !(i === 0 && m.role === 'system' && !m.kind),
  );
  const newestUser = findLastIndex(live, (m) => m.role === 'user');
  if (newestUser <= 0) return null;
  const tail = new Array<number>(live.length + 1).fill(0);
  for (let i = live.length - 1; i >= 0; i--) {
    tail[i] = tail[i + 1] + tokensOf(live[i]);
  }
  const open = new Set<string>();
  let cut = -1;
  for (let i = 0; i <= newestUser; i++) {
    const m = live[i];
    if (i > 0 && open.size === 0 && (m.role === 'user' || m.role === 'assistant')) {
      cut = i;
      if (tail[i] <= keepTokens) break;
    }
    for (const c of m.toolCalls ?? []) open.add(c.id);
    if (m.role === 'tool' && m.toolCallId) open.delete(m.toolCallId);
  }
  if (cut <= 0) return null;
  const span = live.slice(0, cut);
  // A span that is only an earlier summary has nothing new in it.
  if (span.every((m) => m.kind === 'summary')) return null;
  return span;
}

/** The span as text for the summarizer (long messages cut in the middle so the whole fits `maxChars`). */
export function transcript(
  span: readonly MessageRow[],
  names: ReadonlyMap<string, string>,
  maxChars: number,
): string {
  const perMessage = Math.max(300, Math.floor(maxChars / Math.max(1, span.length)));
  const lines: string[] = [];
  for (const m of span) {
    const message: ModelMessage = toModelMessage(m, names);
    let head: string;
    switch (message.role) {
      case 'system':
        head = m.kind === 'summary' ? 'Summary of what came before' : 'System';
        break;
      case 'user':
        head = 'User';
        break;
      case 'assistant':
        head = 'Assistant';
        break;
      case 'tool':
        head = `Result of ${names.get(message.toolCallId) ?? 'a tool'}`;
        break;
    }
    let body = message.content ?? '';
    if (message.role === 'assistant') {
      for (const c of message.toolCalls ?? []) body += `\n(called ${c.name} ${c.arguments})`;
    }
    if (body.length > perMessage) {
      const keep = Math.floor(perMessage / 2);
      body = `${body.slice(0, keep)}\n[… ${body.length - 2 * keep} characters left out …]\n${body.slice(-keep)}`;
    }
    lines.push(`[${head}]\n${body}`);
  }
  return lines.join('\n\n').slice(0, maxChars);
}

/** `rows` with those of `ids` marked pruned (copies; the stored rows change only once stored). */
export function withPruned(rows: readonly MessageRow[], ids: readonly string[]): MessageRow[] {
  if (ids.length === 0) return [...rows];
  const pruned = new Set(ids);
  return rows.map((m) => (pruned.has(m.id) ? { ...m, context: 'pruned' as const } : m));
}

/** The index of the last item that passes `test`, or -1. */
export function findLastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i])) return i;
  return -1;
}
