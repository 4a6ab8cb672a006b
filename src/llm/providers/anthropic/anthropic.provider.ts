import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError } from '@anthropic-ai/sdk';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages/messages';
import type { AppConfig } from '../../../config/app-config';
import { ChunkNormalizer } from '../../chunk-normalizer';
import { joinDeltas } from '../../join-deltas';
import { readChunk } from '../../chunk-read';
import { SseParser } from '../../sse-parser';
import {
  ModelError,
  type ModelProvider,
  type ModelRequest,
  type ModelStreamEvent,
} from '../../model-provider';
import { toolCallIdsIn } from '../openai/openai-request.mapper';
import { abortReason } from '../../upstream-call';
import { mapUpstreamError, modelErrorFor, type SdkErrorClasses } from '../../upstream-error.mapper';
import { ANTHROPIC, toMessageParams } from './anthropic-request.mapper';
import { sdkClientOptions } from '../sdk-options';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/**
 * Anthropic's stop reasons (the SDK's StopReason) in the Chat Completions vocabulary of
 * `finishReason`; `stop` and `length` are what the stream itself ends with (no stop_reason, a
 * limit crossed). `pause_turn` only comes from server tools, which are never asked for.
 */
const FINISH_REASONS: Readonly<Record<string, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  refusal: 'content_filter',
  pause_turn: 'stop',
  stop: 'stop',
  length: 'length',
};

/**
 * A stop reason added after this was written: the message ended whole (its `message_stop` came),
 * so it is read as the model ending its turn — `tool_calls` when the answer holds calls (they run,
 * as with `tool_use`), else `stop` — never passed on raw (the contract's vocabulary is closed).
 */
function finishReason(reason: string, toolCalls: number): string {
  return FINISH_REASONS[reason] ?? (toolCalls > 0 ? 'tool_calls' : 'stop');
}

function noop(): void {}

/** A thinking block as the API sent it, to send back unchanged (its signature covers its text). */
type ThinkingBlock =
  { type: 'thinking'; thinking: string; signature: string } | { type: 'redacted_thinking'; data: string };

/**
 * Anthropic's Messages API (`anthropic/<model>`), streamed through the official SDK: auth,
 * LLM_HEADERS, retries of 429, 529 and 5xx before the body starts. The SDK parses the stream; the
 * shared ChunkNormalizer turns its events into text, tool calls (arguments as `input_json_delta`)
 * and reasoning under the memory bounds (signatures and redacted data under STREAM_LIMITS'
 * providerDataMaxChars), while this class keeps what must go back: the thinking blocks, signed,
 * as ProviderData. Each SSE event is capped by the SseParser (SSE_EVENT_MAX_CHARS).
 */
export class AnthropicProvider implements ModelProvider {
  private readonly client: Anthropic;
  private readonly maxOutputTokens: number;

  constructor(config: AppConfig) {
    this.client = new Anthropic({
      apiKey: config.llm.endpoints.ANTHROPIC.apiKey,
      authToken: null,
      baseURL: config.llm.endpoints.ANTHROPIC.baseUrl ?? ANTHROPIC_BASE_URL,
      ...sdkClientOptions(config),
    });
    this.maxOutputTokens = config.llm.maxOutputTokens;
  }

  async *stream(
    request: ModelRequest,
    signal: AbortSignal,
    alive: () => void = noop,
  ): AsyncGenerator<ModelStreamEvent, void, undefined> {
    if (signal.aborted) throw abortReason(signal);
    const params = toMessageParams(request, request.maxOutputTokens ?? this.maxOutputTokens);
    const normalizer = new ChunkNormalizer({ reservedToolCallIds: toolCallIdsIn(request.messages) });
    const thinking = new Map<number, ThinkingBlock>();
    const out: ModelStreamEvent[] = [];
    const parser = new SseParser((data, name) => {
      const event = parseEvent(data, name);
      // The normalizer counts the thinking blocks' signatures and data against the call's bound
      // first: the event that crosses it is not kept, nor anything after it (the request is closed).
      normalizer.push(event, out);
      if (normalizer.cut) return true;
      keepThinking(event, thinking);
      return event.type === 'message_stop';
    });
    let body: AsyncIterator<Uint8Array>;
    try {
      const response = await this.client.messages.create(params, { signal }).asResponse();
      if (response.body === null) {
        throw new ModelError('UPSTREAM_MALFORMED', 'the model upstream answered without a body', false);
      }
      body = (response.body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    } catch (error) {
      throw failure(error, signal);
    }
    try {
      const readFailure = (error: unknown) => failure(error, signal);
      while (!parser.done) {
        const read = await readChunk(body, parser, readFailure, alive);
        // What came before a bad event is still the model's: yield it, then fail.
        joinDeltas(out);
        for (let i = 0; i < out.length; i++) yield out[i];
        out.length = 0;
        if (read.failed !== undefined) throw read.failed;
        if (read.atEnd) break;
      }
      if (signal.aborted) throw abortReason(signal);
      if (!normalizer.finished && !normalizer.cut) {
        throw new ModelError('UPSTREAM_CONNECTION', 'upstream closed the stream before finishing', true);
      }
      normalizer.end(out);
      for (const event of out) {
        if (event.type !== 'finish') {
          yield event;
          continue;
        }
        // A cut call (a bound crossed, `length`) sends no thinking back: its blocks may lack their
        // signature, and one past the bound is never stored. Its next call then goes without
        // thinking if it continues a tool loop (toMessageParams).
        const blocks = normalizer.cut
          ? []
          : [...thinking.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);
        yield {
          ...event,
          finishReason: finishReason(event.finishReason, event.toolCalls.length),
          ...(blocks.length > 0 ? { providerData: { provider: ANTHROPIC, items: blocks } } : {}),
        };
      }
    } finally {
      // Stopped early (a cut, the consumer, a failure) or done: the body is closed either way.
      await body.return?.();
    }
  }
}

/**
 * One event's data, parsed. The SSE `event:` line is not needed: every data object names its type
 * (some gateways and recordings drop the `event:` lines). An error event becomes a ModelError.
 */
function parseEvent(data: string, name: string): RawMessageStreamEvent {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new ModelError(
      'UPSTREAM_MALFORMED',
      'the model upstream sent an event whose data is not JSON',
      false,
    );
  }
  if (typeof value !== 'object' || value === null) {
    throw new ModelError(
      'UPSTREAM_MALFORMED',
      'the model upstream sent an event that is not an object',
      false,
    );
  }
  const event = value as { type?: unknown; error?: { type?: unknown; message?: unknown } };
  if (name === 'error' || event.type === 'error') {
    const kind = typeof event.error?.type === 'string' ? event.error.type : 'error';
    const message = typeof event.error?.message === 'string' ? event.error.message : kind;
    throw modelErrorFor(undefined, message, kind);
  }
  return value as RawMessageStreamEvent;
}

/** Collects the thinking blocks of an answer, by their index, exactly as streamed. */
function keepThinking(event: RawMessageStreamEvent, blocks: Map<number, ThinkingBlock>): void {
  if (event.type === 'content_block_start') {
    const block = event.content_block;
    if (block.type === 'thinking') {
      blocks.set(event.index, { type: 'thinking', thinking: block.thinking, signature: block.signature });
    } else if (block.type === 'redacted_thinking') {
      blocks.set(event.index, { type: 'redacted_thinking', data: block.data });
    }
  } else if (event.type === 'content_block_delta') {
    const block = blocks.get(event.index);
    if (block?.type !== 'thinking') return;
    if (event.delta.type === 'thinking_delta') block.thinking += event.delta.thinking;
    else if (event.delta.type === 'signature_delta') block.signature += event.delta.signature;
  }
}

const ANTHROPIC_ERRORS: SdkErrorClasses = { APIError, APIConnectionError, APIConnectionTimeoutError };

/** The caller's abort as it is; anything else the SDK threw as a ModelError of the shared codes. */
function failure(error: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return abortReason(signal);
  return mapUpstreamError(error, ANTHROPIC_ERRORS);
}
