import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { modelToEncodingMap } from 'gpt-tokenizer/mapping';
import { createHash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ModelMessage, ModelToolDefinition } from '../llm/model-provider';
import { providerDefinition } from '../llm/providers';
import { attachmentTokens, attachmentTokensBound, type ImageRule } from './attachment-tokens';

/**
 * How a model's tokens are counted: `exact` with the tokenizer OpenAI publishes for its models
 * (o200k_base, or cl100k_base for GPT-4 and GPT-3.5), `estimate` for every other model — o200k_base
 * scaled by `factor`. Claude's tokenizer is not published; published comparisons have it split the
 * same text into 16 % (prose) to 30 % (code) more tokens than o200k_base. Other models' tokenizers
 * differ both ways; on the one recorded prompt with its count (Qwen3-Coder, llama.cpp, in
 * test/fixtures/upstream) o200k_base counts 17.5 % fewer, so the estimate leans high: an
 * overestimate only compacts a little early, an underestimate costs a refused call.
 * docs/long-sessions.md has the measured errors.
 */
export interface Tokenizer {
  kind: 'exact' | 'estimate';
  encoding: 'o200k_base' | 'cl100k_base';
  factor: number;
  /** How its provider counts an image (attachment-tokens.ts); absent: `tiles`. */
  images?: ImageRule;
}

/** Claude's tokens per o200k_base token, the middle of the published 1.16–1.30. */
export const CLAUDE_FACTOR = 1.23;
/** Any other model's tokens per o200k_base token (see Tokenizer). */
export const OTHER_FACTOR = 1.1;

/** Tokens of a message's frame (role, separators) and of the reply's priming, as OpenAI counts them. */
const MESSAGE_OVERHEAD = 4;
const TOOL_CALL_OVERHEAD = 8;
const REQUEST_OVERHEAD = 3;
const TOOLS_OVERHEAD = 10;

/**
 * Text is counted in slices of about this many characters, cut before a line break: byte-pair
 * merging slows down sharply on long pieces without one (50 KB of base64 takes 400 ms whole, 11 ms
 * sliced), and a slice boundary at a line break changes the count by well under 1 %.
 */
const SLICE_CHARS = 2048;

/**
 * The tokenizer of a model, as splitModelName gives it: its provider, and the provider's own name
 * of it (whose last segment names the model: `meta-llama/llama-3`).
 */
export function tokenizerFor(provider: string, model: string): Tokenizer {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  if (/^(gpt-|chatgpt-|o\d|codex-)/.test(name)) {
    const mapped = (modelToEncodingMap as Record<string, string | undefined>)[name];
    const cl100k = mapped === 'cl100k_base' || /^gpt-(3\.5|4)(-|$)/.test(name);
    return { kind: 'exact', encoding: cl100k ? 'cl100k_base' : 'o200k_base', factor: 1 };
  }
  const claude = providerDefinition(provider)?.tokenizer === 'claude' || name.startsWith('claude');
  return claude
    ? { kind: 'estimate', encoding: 'o200k_base', factor: CLAUDE_FACTOR, images: 'area' }
    : { kind: 'estimate', encoding: 'o200k_base', factor: OTHER_FACTOR };
}

/**
 * Text that looks like a special token (`<|endoftext|>`, `<|im_start|>`) is counted as the plain
 * text it is: a prompt or a tool's output may hold it, and the tokenizer would otherwise throw.
 */
const AS_PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** `text` in slices of about SLICE_CHARS, each cut before a line break where there is one. */
function* slices(text: string): Generator<string> {
  for (let i = 0; i < text.length;) {
    let end = Math.min(text.length, i + SLICE_CHARS);
    if (end < text.length) {
      const lineBreak = text.lastIndexOf('\n', end);
      if (lineBreak > i + SLICE_CHARS / 2) end = lineBreak;
      // Never between the two halves of a surrogate pair.
      else if (/[\uD800-\uDBFF]/.test(text[end - 1])) end--;
    }
    yield text.slice(i, end);
    i = end;
  }
}

function counterOf(encoding: Tokenizer['encoding']): (slice: string) => number {
  const countIn = encoding === 'cl100k_base' ? countCl100k : countO200k;
  return (slice) => countIn(slice, AS_PLAIN_TEXT);
}

/** The tokens of `text` in `encoding`, counted slice by slice (see SLICE_CHARS). */
export function countText(text: string, encoding: Tokenizer['encoding']): number {
  const count = counterOf(encoding);
  let total = 0;
  for (const slice of slices(text)) total += count(slice);
  return total;
}

/** `countText`, handing the event loop back after every `yieldChars` counted (for long text). */
export async function countTextYielding(
  text: string,
  encoding: Tokenizer['encoding'],
  yieldChars: number,
): Promise<number> {
  const count = counterOf(encoding);
  let total = 0;
  let since = 0;
  for (const slice of slices(text)) {
    total += count(slice);
    since += slice.length;
    if (since >= yieldChars) {
      since = 0;
      await nextTurn();
    }
  }
  return total;
}

/** A message's tokens without the tokenizer's factor: its frame, content and tool calls. */
export function rawMessageTokens(
  m: ModelMessage,
  encoding: Tokenizer['encoding'],
  images: ImageRule = 'tiles',
): number {
  let n = MESSAGE_OVERHEAD + countText(m.content ?? '', encoding) + attachmentTokens(m, images);
  if (m.role === 'assistant') {
    for (const c of m.toolCalls ?? []) {
      n += TOOL_CALL_OVERHEAD + countText(c.name, encoding) + countText(c.arguments, encoding);
    }
  }
  return n;
}

/** `rawMessageTokens` for a long message, yielding to the event loop as it goes. */
export async function rawMessageTokensYielding(
  m: ModelMessage,
  encoding: Tokenizer['encoding'],
  yieldChars: number,
  images: ImageRule = 'tiles',
): Promise<number> {
  let n =
    MESSAGE_OVERHEAD +
    (await countTextYielding(m.content ?? '', encoding, yieldChars)) +
    attachmentTokens(m, images);
  if (m.role === 'assistant') {
    for (const c of m.toolCalls ?? []) {
      n +=
        TOOL_CALL_OVERHEAD +
        countText(c.name, encoding) +
        (await countTextYielding(c.arguments, encoding, yieldChars));
    }
  }
  return n;
}

/**
 * Tool definition sets counted, remembered by their text: every run of a session builds its own
 * list, but a server offers few distinct sets (counting one took ~0.5 ms of every run's start at
 * c=256). A bound on memory: past it, the oldest is forgotten. A list already looked up is known
 * by itself (its text, and a hash of it, cost 1.4 % of the server's CPU at c=256).
 */
const TOOL_SETS_REMEMBERED = 256;
const toolSetCounts = new Map<string, number>();
const listCounts = new WeakMap<readonly ModelToolDefinition[], Map<Tokenizer['encoding'], number>>();

/** The tokens the tool definitions of a request take, without the factor. */
export function rawToolTokens(
  tools: readonly ModelToolDefinition[],
  encoding: Tokenizer['encoding'],
): number {
  if (tools.length === 0) return 0;
  let ofList = listCounts.get(tools);
  const known = ofList?.get(encoding);
  if (known !== undefined) return known;
  const text = JSON.stringify(tools);
  const key = `${encoding}:${createHash('sha256').update(text).digest('base64')}`;
  let n = toolSetCounts.get(key);
  if (n === undefined) {
    n = TOOLS_OVERHEAD + countText(text, encoding);
    if (toolSetCounts.size >= TOOL_SETS_REMEMBERED) toolSetCounts.delete(toolSetCounts.keys().next().value!);
    toolSetCounts.set(key, n);
  }
  if (!ofList) listCounts.set(tools, (ofList = new Map<Tokenizer['encoding'], number>()));
  ofList.set(encoding, n);
  return n;
}

/** The fixed tokens of every request (the reply's priming). */
export const REQUEST_TOKENS = REQUEST_OVERHEAD;

/**
 * At least `rawMessageTokens(m)`, without the tokenizer: a BPE token stands for one UTF-8 byte or
 * more, and one UTF-16 unit is at most three UTF-8 bytes.
 */
export function messageTokensBound(m: ModelMessage): number {
  const calls = m.role === 'assistant' ? (m.toolCalls?.length ?? 0) : 0;
  return MESSAGE_OVERHEAD + calls * TOOL_CALL_OVERHEAD + 3 * messageChars(m) + attachmentTokensBound(m);
}

/** Characters a message costs to count (what `rawMessageTokens` reads). */
export function messageChars(m: ModelMessage): number {
  let n = m.content?.length ?? 0;
  if (m.role === 'assistant') for (const c of m.toolCalls ?? []) n += c.name.length + c.arguments.length;
  return n;
}
