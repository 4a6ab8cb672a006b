/** Tokens one model call (or a run, summed) used. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens read from the provider's prompt cache (part of `promptTokens`), where reported. */
  cacheReadTokens?: number;
  /** Prompt tokens written to the provider's prompt cache (part of `promptTokens`), where reported. */
  cacheWriteTokens?: number;
  /** Completion tokens spent on reasoning (part of `completionTokens`), where reported. */
  reasoningTokens?: number;
  /** Some of it was estimated: the provider reported none or only part (a cut, cancelled or failed call). */
  estimated?: boolean;
}

import type { ReasoningLevel } from '../config/app-config';

export { REASONING_LEVELS, type ReasoningLevel } from '../config/app-config';

/**
 * What one provider needs back with an assistant message on later calls, opaque to everyone else
 * (Anthropic's signed thinking blocks, the Responses API's encrypted reasoning items). `provider`
 * names the provider that wrote it: another provider ignores it, so a session that switches
 * provider sends each one only what it understands.
 */
export interface ProviderData {
  provider: string;
  /** JSON the provider wrote, sent back unchanged. */
  items: unknown[];
}

/**
 * A file in a user message ("Attachments"), sent natively by each provider: an image as an image
 * input, a PDF as a document, text as a text part carrying its name.
 */
export interface ModelFilePart {
  type: 'file';
  name: string;
  mediaType: string;
  /** Its bytes and an image's pixels, what the context window counts it by (when known). */
  size?: number;
  width?: number | null;
  height?: number | null;
  /** Reads its bytes (null: the file was deleted); ModelProviders calls it once per model call. */
  load: () => Promise<Buffer | null>;
  /** Base64 of its bytes: set by ModelProviders (withFileData) before a provider sees the request. */
  data?: string;
}

/** A part of a user message that has files: its text and its files, in order. */
export type ModelUserPart = { type: 'text'; text: string } | ModelFilePart;

/** A message of the conversation as the model sees it (OpenAI Chat Completions shape, our names). */
export type ModelMessage =
  | { role: 'system'; content: string }
  | {
      role: 'user';
      /** Its text (its text parts joined by a blank line when it has parts). */
      content: string;
      /** When it has files: every part in order, what providers send instead of `content`. */
      parts?: ModelUserPart[];
    }
  | {
      role: 'assistant';
      content: string | null;
      toolCalls?: ModelToolCall[];
      /** The reasoning the provider showed with this answer (never sent as content). */
      reasoning?: string;
      providerData?: ProviderData;
    }
  | {
      role: 'tool';
      toolCallId: string;
      content: string;
      /**
       * The files its result carries (read_file of an image or PDF), sent beside `content` as each
       * provider takes them (a deleted one is a text part, its note, in its place).
       */
      files?: ModelUserPart[];
    };

export interface ModelToolCall {
  id: string;
  name: string;
  /** The arguments exactly as the model wrote them (a JSON text, possibly broken). */
  arguments: string;
  /**
   * Opaque provider data that must go back with this call in later requests, e.g. Gemini's
   * `extra_content.google.thought_signature` (Gemini 3 rejects a history without it).
   */
  extraContent?: Record<string, unknown>;
  /**
   * Why the call cannot run as the model wrote it — its arguments passed the limit of one model
   * call (STREAM_LIMITS): `arguments` is then `{}`, and the call is answered with this as an
   * INVALID_ARGUMENTS result.
   */
  argumentsRefused?: string;
}

export interface ModelToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  /**
   * The model: `provider/model` (or a bare name, `openai/<name>`) as the loop sends it to
   * ModelProviders, which hands each provider its own name for it (without the prefix).
   */
  model: string;
  messages: ModelMessage[];
  /** Omitted from the upstream request when empty. */
  tools: ModelToolDefinition[];
  /** `none` on the last allowed model call of a run. */
  toolChoice?: 'auto' | 'none';
  /** How hard to reason (default off); a provider whose models cannot reason ignores it. */
  reasoning?: ReasoningLevel;
  /** LLM_MAX_OUTPUT_TOKENS: what one call may produce (sent where the API requires or takes it). */
  maxOutputTokens?: number;
  /**
   * The answer as JSON valid against `schema` (Structured output), sent as each provider's own
   * structured output; the loop checks the answer itself in every case.
   */
  responseFormat?: { name: string; schema: Record<string, unknown> };
}

/**
 * What a model stream yields, in order; exactly one `finish` ends a stream that did not throw. Text
 * and reasoning deltas and the finish's tool calls are storable text (common/storable-text); a delta
 * may hold what several upstream chunks carried. `tool_call_delta` fragments are as received, for
 * progress only.
 */
export type ModelStreamEvent =
  | { type: 'text'; delta: string }
  | { type: 'reasoning'; delta: string }
  | { type: 'tool_call_delta'; index: number; id?: string; name?: string; argumentsDelta?: string }
  | {
      type: 'finish';
      finishReason: string;
      usage: Usage;
      toolCalls: ModelToolCall[];
      /** What the provider needs back with this answer on later calls. */
      providerData?: ProviderData;
      /** The `provider/model` that answered (set by ModelProviders: a fallback's, when one answered). */
      model?: string;
      /** The upstream's id of this answer (`chatcmpl-…`, `msg_…`, `resp_…`), where it sent one. */
      responseId?: string;
      /** The host and port the request went to (set by ModelProviders, from the provider's base URL). */
      server?: ServerAddress;
    };

/** Where a provider's requests go: its base URL's host and port, never its path or credentials. */
export interface ServerAddress {
  address: string;
  port: number;
}

/** Why a model call failed; `retryable` follows the contract (429, 5xx and network failures). */
export class ModelError extends Error {
  constructor(
    readonly code:
      | 'UPSTREAM_RATE_LIMITED'
      | 'UPSTREAM_UNAVAILABLE'
      | 'UPSTREAM_CONNECTION'
      | 'UPSTREAM_TIMEOUT'
      | 'UPSTREAM_AUTH'
      | 'UPSTREAM_BAD_REQUEST'
      | 'UPSTREAM_MALFORMED'
      | 'UPSTREAM_ERROR'
      /** The model's provider is not configured here (any more): a session made before a change. */
      | 'MODEL_UNAVAILABLE',
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
    /** How long the upstream asked to wait before trying again (`retry-after-ms` / `retry-after`). */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

/**
 * A chat model that streams. Implementations turn their wire format into ModelStreamEvents, throw
 * ModelError for upstream failures, and stop promptly (throwing or returning) when `signal` aborts.
 * The idle timeout and the answer budget are not theirs: ModelProviders holds every provider's
 * stream to them (model-stream-guard.ts); a provider calls `alive` whenever the upstream sent
 * something (bytes that make no event yet, such as a usage chunk, still keep the call alive).
 * `request.model` is the provider's own name of the model. What the rest of the server asks of a
 * provider (price and window ids, tokenizer, the inputs it accepts) is its ProviderDefinition's.
 */
export interface ModelProvider {
  stream(request: ModelRequest, signal: AbortSignal, alive?: () => void): AsyncIterable<ModelStreamEvent>;
}

export const MODEL_PROVIDER = Symbol('MODEL_PROVIDER');
