/*
 * Prompts and answers as OpenTelemetry's GenAI conventions record them with content capture
 * (`gen_ai.input.messages`, `gen_ai.output.messages`: arrays of `{ role, parts }`, JSON), cut to fit
 * one span attribute so that what is recorded stays JSON.
 */

/** A tool call an answer asked for, as the model wrote it (`arguments`: its JSON text, possibly broken). */
export interface TracedToolCallPart {
  id: string;
  name: string;
  arguments: string;
}

/** A message as the model was sent it (llm's ModelMessage, which observability does not import). */
export type TracedMessage =
  | { role: 'system' | 'user'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      toolCalls?: readonly TracedToolCallPart[];
      reasoning?: string;
    }
  | { role: 'tool'; toolCallId: string; content: string };

/** What a model call answered: its text, reasoning and tool calls. */
export interface TracedAnswer {
  text: string;
  reasoning?: string;
  toolCalls: readonly TracedToolCallPart[];
}

type Part =
  | { type: 'text'; content: string }
  | { type: 'reasoning'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id: string; result: string };

interface ConventionMessage {
  role: string;
  parts: Part[];
  finish_reason?: string;
}

/** `gen_ai.input.messages`: the messages in the order they were sent, at most `maxChars` of JSON. */
export function inputMessagesJson(messages: readonly TracedMessage[], maxChars: number): string {
  return fitted(messages.map(conventionMessage), maxChars);
}

/** `gen_ai.output.messages`: the answer as one assistant message with its finish reason. */
export function outputMessagesJson(answer: TracedAnswer, finishReason: string, maxChars: number): string {
  const message = conventionMessage({
    role: 'assistant',
    content: answer.text,
    toolCalls: answer.toolCalls,
    reasoning: answer.reasoning,
  });
  // The convention's word for an answer that asks for tools; the others are the same words.
  message.finish_reason = finishReason === 'tool_calls' ? 'tool_call' : finishReason;
  return fitted([message], maxChars);
}

function conventionMessage(m: TracedMessage): ConventionMessage {
  switch (m.role) {
    case 'system':
    case 'user':
      return { role: m.role, parts: [{ type: 'text', content: m.content }] };
    case 'tool':
      return { role: 'tool', parts: [{ type: 'tool_call_response', id: m.toolCallId, result: m.content }] };
    case 'assistant': {
      const parts: Part[] = [];
      if (m.reasoning) parts.push({ type: 'reasoning', content: m.reasoning });
      if (m.content) parts.push({ type: 'text', content: m.content });
      for (const c of m.toolCalls ?? [])
        parts.push({ type: 'tool_call', id: c.id, name: c.name, arguments: parsedOrText(c.arguments) });
      return { role: 'assistant', parts };
    }
  }
}

/** Arguments as the JSON value they are (the convention's form), or the text when it is no JSON. */
function parsedOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * The messages as JSON of at most `maxChars`: when whole they are longer, every long text (a part's
 * content, result, a call's name or arguments) is cut in its middle to an equal share, marked; messages that still
 * do not fit are left out from the oldest, and a count of them stands first.
 */
function fitted(messages: ConventionMessage[], maxChars: number): string {
  const whole = JSON.stringify(messages);
  if (whole.length <= maxChars) return whole;
  const texts = messages.reduce((n, m) => n + m.parts.length, 0);
  // The JSON around the texts (roles, types, ids, names), and a share of what is left for each text.
  const frame = JSON.stringify(messages.map((m) => ({ ...m, parts: m.parts.map(emptied) }))).length;
  let share = Math.max(64, Math.floor((maxChars - frame) / Math.max(1, texts)) - 16);
  const shortenedTo = (max: number) =>
    messages.map((m) => ({ ...m, parts: m.parts.map((p) => shortened(p, max)) }));
  let cut = shortenedTo(share);
  let json = JSON.stringify(cut);
  // Escapes (quotes, newlines) make JSON longer than its texts: smaller shares until it fits.
  while (json.length > maxChars && share > 64) {
    share = Math.max(64, Math.floor(share / 2));
    cut = shortenedTo(share);
    json = JSON.stringify(cut);
  }
  let left = 0;
  while (json.length > maxChars && cut.length > 1) {
    cut = cut.slice(1);
    left++;
    const note: ConventionMessage = {
      role: 'system',
      parts: [{ type: 'text', content: `[${left} earlier messages left out]` }],
    };
    json = JSON.stringify([note, ...cut]);
  }
  // One message whose frame alone is too long (thousands of tool calls): the SDK's limit cuts it.
  return json;
}

function emptied(p: Part): Part {
  switch (p.type) {
    case 'text':
    case 'reasoning':
      return { ...p, content: '' };
    case 'tool_call':
      return { ...p, name: '', arguments: '' };
    case 'tool_call_response':
      return { ...p, result: '' };
  }
}

function shortened(p: Part, max: number): Part {
  switch (p.type) {
    case 'text':
    case 'reasoning':
      return { ...p, content: middleCut(p.content, max) };
    case 'tool_call': {
      // A name is the model's to write: as long as it liked.
      const name = middleCut(p.name, max);
      const args = typeof p.arguments === 'string' ? p.arguments : JSON.stringify(p.arguments);
      return args.length <= max ? { ...p, name } : { ...p, name, arguments: middleCut(args, max) };
    }
    case 'tool_call_response':
      return { ...p, result: middleCut(p.result, max) };
  }
}

/** `text` cut in its middle to about `max` characters, saying how many were left out. */
function middleCut(text: string, max: number): string {
  if (text.length <= max) return text;
  const keep = Math.max(1, Math.floor((max - 40) / 2));
  return `${cutAt(text, keep)}[… ${text.length - 2 * keep} characters left out …]${text.slice(text.length - keep)}`;
}

/** The first `max` UTF-16 units of `text`, never half a surrogate pair. */
export function cutAt(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}
