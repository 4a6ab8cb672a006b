/** Builders for OpenAI-style stream chunks and SSE frames, shaped like api.openai.com's. */

export interface ChunkEnvelope {
  id: string;
  model: string;
  created: number;
}

export interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export const SSE_DONE = 'data: [DONE]\n\n';

const DEFAULT_ENVELOPE: ChunkEnvelope = { id: 'chatcmpl-fake', model: 'fake-model', created: 1_700_000_000 };

/** One `chat.completion.chunk` with a single choice. */
export function chatChunk(
  delta: Record<string, unknown>,
  finishReason: string | null = null,
  envelope: ChunkEnvelope = DEFAULT_ENVELOPE,
): Record<string, unknown> {
  return {
    id: envelope.id,
    object: 'chat.completion.chunk',
    created: envelope.created,
    model: envelope.model,
    system_fingerprint: 'fp_fake',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

/** The final `choices: []` chunk OpenAI sends when the request asked for `stream_options.include_usage`. */
export function usageChunk(
  usage: WireUsage,
  envelope: ChunkEnvelope = DEFAULT_ENVELOPE,
): Record<string, unknown> {
  return {
    id: envelope.id,
    object: 'chat.completion.chunk',
    created: envelope.created,
    model: envelope.model,
    system_fingerprint: 'fp_fake',
    choices: [],
    usage,
  };
}

export function wireUsage(promptTokens: number, completionTokens: number): WireUsage {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

/** One SSE event carrying `value` as JSON. */
export function sseData(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}

/**
 * Splits text the way a model streams it: given pieces as they are, `n` roughly equal pieces, or by
 * default one piece per word with its leading space (`'Hello world'` → `['Hello', ' world']`).
 */
export function splitText(text: string, pieces?: number | readonly string[]): string[] {
  if (Array.isArray(pieces)) return [...(pieces as readonly string[])];
  if (text === '') return [];
  if (typeof pieces === 'number') return splitEvenly(text, pieces);
  return text.match(/\s*\S+|\s+$/g) ?? [text];
}

/** `n` pieces of about equal length (fewer when the text is shorter than `n`). */
export function splitEvenly(text: string, n: number): string[] {
  const count = Math.max(1, Math.min(Math.floor(n), text.length));
  const size = Math.ceil(text.length / count);
  const parts: string[] = [];
  for (let at = 0; at < text.length; at += size) parts.push(text.slice(at, at + size));
  return parts;
}
