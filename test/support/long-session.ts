import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';

/**
 * Helpers for long sessions ("Long sessions" in the contract), written from the contract alone: a
 * client's replay of `GET /v1/sessions/:id`, the pairing rule, and text to fill a workspace with.
 */

/** A message in a neutral form, for comparing what the fake received with a replay. */
export interface PlainMessage {
  role: string;
  content: string;
  toolCalls?: { id: string; name: string; arguments: string }[];
  toolCallId?: string;
}

/** A message as `GET /v1/sessions/:id` lists it. */
export interface ListedMessage {
  id: string;
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  toolCalls?: { id: string; name: string; arguments: string }[];
  toolCallId?: string;
  kind?: 'summary';
  summarizes?: { fromId: string; toId: string };
  context?: 'pruned' | 'summarized';
}

/** How a tool result cut to fit the window ends (marked, as a read past READ_MAX_BYTES is). */
const CUT_MARK =
  /\n\[truncated: showing the first \d+ KB of \d+ KB, more than a quarter of the model's context window; [^\]\n]*\]$/;

/**
 * What the contract says the model gets: the messages not summarized, in order, each pruned one as
 * its stub. A client cannot know where the server cuts a result larger than a quarter of the window;
 * given what was `sent`, a tool result that went out as a marked cut of the stored one is taken as
 * sent (only when the stored result starts with what was sent).
 */
export function replay(messages: readonly ListedMessage[], sent?: readonly PlainMessage[]): PlainMessage[] {
  const names = new Map<string, string>();
  for (const m of messages) for (const c of m.toolCalls ?? []) names.set(c.id, c.name);
  return messages
    .filter((m) => m.context !== 'summarized')
    .map((m, i) => {
      const asSent = sent?.[i];
      if (
        m.role === 'tool' &&
        m.context !== 'pruned' &&
        asSent?.role === 'tool' &&
        asSent.toolCallId === m.toolCallId &&
        CUT_MARK.test(asSent.content) &&
        (m.content ?? '').startsWith(asSent.content.replace(CUT_MARK, ''))
      ) {
        return { role: 'tool', content: asSent.content, toolCallId: m.toolCallId };
      }
      if (m.role === 'tool') {
        const content =
          m.context === 'pruned'
            ? `[output of ${names.get(m.toolCallId ?? '')} pruned to save context: ${Math.max(1, Math.round(Buffer.byteLength(m.content ?? '') / 1024))} KB; call the tool again to see it]`
            : (m.content ?? '');
        return { role: 'tool', content, toolCallId: m.toolCallId };
      }
      return {
        role: m.role,
        content: m.content ?? '',
        ...(m.toolCalls && m.toolCalls.length > 0 ? { toolCalls: m.toolCalls } : {}),
      };
    });
}

/** The messages of a Chat Completions request in the same form. */
export function received(body: ChatCompletionCreateParams): PlainMessage[] {
  return body.messages.map((m) => {
    const content = typeof m.content === 'string' ? m.content : '';
    if (m.role === 'tool') return { role: 'tool', content, toolCallId: m.tool_call_id };
    if (m.role === 'assistant' && m.tool_calls && m.tool_calls.length > 0) {
      return {
        role: 'assistant',
        content,
        toolCalls: m.tool_calls.map((c) =>
          c.type === 'function'
            ? { id: c.id, name: c.function.name, arguments: c.function.arguments }
            : { id: c.id, name: '', arguments: '' },
        ),
      };
    }
    return { role: m.role, content };
  });
}

/**
 * Why a conversation breaks the pairing rule, or null: every assistant tool call is answered by one
 * tool message right after it (before any other user or assistant message), and every tool message
 * answers a call of the assistant message before it.
 */
export function pairingProblem(messages: readonly PlainMessage[]): string | null {
  let open = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (m.role === 'tool') {
      if (!m.toolCallId || !open.has(m.toolCallId))
        return `message ${i}: a tool result for ${m.toolCallId} with no open call`;
      open.delete(m.toolCallId);
      continue;
    }
    if (open.size > 0) return `message ${i} (${m.role}): calls ${[...open].join(', ')} have no result`;
    open = new Set((m.toolCalls ?? []).map((c) => c.id));
  }
  return open.size > 0 ? `calls ${[...open].join(', ')} have no result at the end` : null;
}

const WORDS =
  'the of and to in is was that for on with as by at from this be are have not or an but which one all were when there can more if out so what up about into than them only other new some time could these two may then do first any like now such make over did where after most also made many before through well back much down should because each just those people how too little state good very world still own see men work long here get both between life being under never day same another know while last might us great old year off come since against go came right used take three'.split(
    ' ',
  );

/** About `bytes` of prose-like text (lines of common words), the same for the same `seed`. */
export function proseOf(bytes: number, seed: number): string {
  let state = seed * 2654435761 + 1;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state;
  };
  const lines: string[] = [];
  let size = 0;
  while (size < bytes) {
    const words: string[] = [];
    for (let w = 0; w < 12; w++) words.push(WORDS[next() % WORDS.length]);
    const line = `${words.join(' ')}.`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}
