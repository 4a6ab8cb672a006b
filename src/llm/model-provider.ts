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
}

/** A message of the conversation as the model sees it (OpenAI Chat Completions shape, our names). */
export type ModelMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ModelToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

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
  model: string;
  messages: ModelMessage[];
  /** Omitted from the upstream request when empty. */
  tools: ModelToolDefinition[];
  /** `none` on the last allowed model call of a run. */
  toolChoice?: 'auto' | 'none';
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
      /** The `provider/model` that answered, when not the one asked for (a fallback). */
      model?: string;
    };

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
      | 'UPSTREAM_ERROR',
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

/**
 * A chat model that streams. Implementations turn their wire format into ModelStreamEvents, throw
 * ModelError for upstream failures, and stop promptly (throwing or returning) when `signal` aborts.
 */
export interface ModelProvider {
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelStreamEvent>;
}

export const MODEL_PROVIDER = Symbol('MODEL_PROVIDER');
