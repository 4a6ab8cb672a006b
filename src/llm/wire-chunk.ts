/**
 * What upstreams actually stream, as loosely as they send it: every field may be missing, null or of
 * another type than OpenAI documents, so each is `unknown` and read with a type check.
 */
export interface WireChunk {
  /** The response's id (Chat Completions: on every chunk). */
  id?: unknown;
  choices?: unknown;
  usage?: unknown;
  x_groq?: unknown;
  /** Anthropic Messages events carry a `type` instead of `choices`. */
  type?: unknown;
  message?: unknown;
  index?: unknown;
  content_block?: unknown;
  delta?: unknown;
}

export interface WireChoice {
  delta?: unknown;
  finish_reason?: unknown;
}

export interface WireDelta {
  content?: unknown;
  refusal?: unknown;
  reasoning_content?: unknown;
  reasoning?: unknown;
  tool_calls?: unknown;
}

export interface WireToolCall {
  index?: unknown;
  id?: unknown;
  function?: unknown;
  extra_content?: unknown;
}

export interface WireFunction {
  name?: unknown;
  arguments?: unknown;
  /** Older llama.cpp nested the id here. */
  id?: unknown;
}

export interface WireUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  /** Chat Completions: `{ cached_tokens }`. */
  prompt_tokens_details?: unknown;
  /** Chat Completions: `{ reasoning_tokens }`. */
  completion_tokens_details?: unknown;
  input_tokens?: unknown;
  output_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
  cache_read_input_tokens?: unknown;
}
