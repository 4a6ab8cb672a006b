import OpenAI, { APIError } from 'openai';
import type { ResponseStreamEvent, ResponseUsage } from 'openai/resources/responses/responses';
import type { AppConfig } from '../../../config/app-config';
import { ChunkNormalizer } from '../../chunk-normalizer';
import { joinDeltas } from '../../join-deltas';
import {
  ModelError,
  type ModelProvider,
  type ModelRequest,
  type ModelStreamEvent,
  type Usage,
} from '../../model-provider';
import { createNodeFetch } from '../../node-fetch';
import { readChunk } from '../../chunk-read';
import { SseParser } from '../../sse-parser';
import { abortReason, UpstreamCall } from '../../upstream-call';
import { modelErrorFor } from '../../upstream-error.mapper';
import { BODY_END_AFTER_DONE_MS, NO_API_KEY, OPENAI_BASE_URL } from '../openai/openai.provider';
import { toolCallIdsIn } from '../openai/openai-request.mapper';
import { bodyChunksOf, bodyEnd, upstreamFailure } from '../openai/streamed-body';
import { sdkClientOptions } from '../sdk-options';
import { ReasoningItems } from './reasoning-items';
import { OPENAI_RESPONSES, toResponseParams } from './responses-request.mapper';

function noop(): void {}

/** How the response ended, as the Chat Completions vocabulary of `finishReason` says it. */
interface Ending {
  finishReason: string;
  usage: ResponseUsage | null | undefined;
  responseId: string;
}

/**
 * OpenAI's Responses API (`openai-responses/<model>`), streamed and stateless (`store: false`).
 * The official SDK sends the request (same key, base URL, LLM_HEADERS and retries as `openai`);
 * the body is read as the `openai` provider reads it (docs/decisions/007-raw-sse-parsing.md):
 * nodeFetch's raw body, SseParser's bound on a line and an event, one JSON.parse per event. Its
 * events are fed to the shared ChunkNormalizer as the Chat Completions deltas they amount to (text,
 * function-call arguments by output index, reasoning summaries as reasoning), so limits, storable
 * text and tool calls work as for every provider; the encrypted reasoning items come back as
 * ProviderData, counted against the call's one bound on opaque state (STREAM_LIMITS.providerDataMaxChars).
 */
export class OpenAiResponsesProvider implements ModelProvider {
  private readonly client: OpenAI;
  private readonly maxOutputTokens: number;

  constructor(config: AppConfig) {
    this.client = new OpenAI({
      // No key is a key the SDK must still be given: a local server takes any (start-up says so).
      apiKey: config.llm.endpoints.OPENAI.apiKey ?? NO_API_KEY,
      baseURL: config.llm.endpoints.OPENAI.baseUrl ?? OPENAI_BASE_URL,
      organization: null,
      project: null,
      ...sdkClientOptions(config),
      // A streamed answer's body is read raw off the socket (see nodeFetch); any other as fetch gives it.
      fetch: createNodeFetch(),
    });
    this.maxOutputTokens = config.llm.maxOutputTokens;
  }

  async *stream(
    request: ModelRequest,
    signal: AbortSignal,
    alive: () => void = noop,
  ): AsyncGenerator<ModelStreamEvent, void, undefined> {
    if (signal.aborted) throw abortReason(signal);
    const params = toResponseParams(request, request.maxOutputTokens ?? this.maxOutputTokens);
    const normalizer = new ChunkNormalizer({ reservedToolCallIds: toolCallIdsIn(request.messages) });
    const reasoning = new ReasoningItems();
    const out: ModelStreamEvent[] = [];
    let ending: Ending | undefined;
    let headers: Headers | undefined;
    const parser = new SseParser((data) => {
      ending = this.take(parseEvent(data, headers), data.length, normalizer, reasoning, out);
      return ending !== undefined || normalizer.cut;
    });
    const call = new UpstreamCall(signal);
    let atEnd = false;
    try {
      let response: Response;
      try {
        response = await this.client.responses.create(params, { signal: call.signal }).asResponse();
      } catch (error) {
        throw call.failure(error);
      }
      alive();
      headers = response.headers;
      const chunks = bodyChunksOf(response);
      const readFailure = (error: unknown) => call.failure(error);
      while (!parser.done) {
        const read = await readChunk(chunks, parser, readFailure, alive);
        atEnd = read.atEnd;
        // What came before a bad event is still the model's: yield it, then fail.
        joinDeltas(out);
        for (let i = 0; i < out.length; i++) yield out[i];
        out.length = 0;
        if (read.failed !== undefined) throw upstreamFailure(read.failed, call);
        if (atEnd) break;
      }
      if (ending !== undefined && !atEnd) atEnd = await bodyEnd(chunks, BODY_END_AFTER_DONE_MS);
      call.throwIfStopped();
      const cut = normalizer.cut;
      if (ending === undefined && !cut) {
        throw new ModelError('UPSTREAM_CONNECTION', 'upstream closed the stream before finishing', true);
      }
      // The normalizer's finish carries the tool calls (none when cut) and `length` when cut; the
      // reason and usage are otherwise the response's.
      const finishReason = ending?.finishReason;
      if (finishReason !== undefined)
        normalizer.push({ choices: [{ delta: {}, finish_reason: finishReason }] }, out);
      normalizer.end(out);
      // Cut (or a body held open after the response ended): close the request before the step goes on.
      if (!atEnd) call.close(true);
      joinDeltas(out);
      // A cut call keeps no provider state: an item past the bound was never kept, nor are those before it.
      const items = cut ? [] : reasoning.list();
      for (const event of out) {
        if (event.type !== 'finish') {
          yield event;
          continue;
        }
        yield {
          ...event,
          usage: ending ? usageOf(ending.usage) : event.usage,
          ...(ending ? { responseId: ending.responseId } : {}),
          ...(items.length > 0 ? { providerData: { provider: OPENAI_RESPONSES, items } } : {}),
        };
      }
    } finally {
      // The consumer stopped early, or a failure: closing aborts the request.
      call.close(!atEnd);
    }
  }

  /** One Responses event (`chars` long as sent) into the normalizer; the ending when the response is over. */
  private take(
    event: ResponseStreamEvent,
    chars: number,
    normalizer: ChunkNormalizer,
    reasoning: ReasoningItems,
    out: ModelStreamEvent[],
  ): Ending | undefined {
    const delta = (d: Record<string, unknown>) => normalizer.push({ choices: [{ delta: d }] }, out);
    // Only these matter; event types added after this was written are ignored.
    const type = event.type;
    if (type === 'response.output_text.delta' || type === 'response.refusal.delta') {
      delta({ content: event.delta });
    } else if (type === 'response.reasoning_summary_text.delta') {
      delta({ reasoning_content: event.delta });
    } else if (type === 'response.output_item.added') {
      if (event.item?.type === 'function_call') {
        const { call_id, name, arguments: args } = event.item;
        delta({
          tool_calls: [{ index: event.output_index, id: call_id, function: { name, arguments: args } }],
        });
      }
    } else if (type === 'response.function_call_arguments.delta') {
      delta({ tool_calls: [{ index: event.output_index, function: { arguments: event.delta } }] });
    } else if (type === 'response.output_item.done') {
      // Kept whole, encrypted content and all, to go back unchanged with the next request.
      if (event.item?.type === 'reasoning' && normalizer.providerData(chars)) {
        reasoning.keep(event.output_index, event.item);
      }
    } else if (type === 'response.completed') {
      const output: unknown = event.response?.output;
      const calls = Array.isArray(output) && output.some((item) => isFunctionCall(item));
      return {
        finishReason: calls ? 'tool_calls' : 'stop',
        usage: event.response?.usage,
        responseId: event.response?.id,
      };
    } else if (type === 'response.incomplete') {
      const reason = event.response?.incomplete_details?.reason;
      return {
        finishReason: reason === 'content_filter' ? 'content_filter' : 'length',
        usage: event.response?.usage,
        responseId: event.response?.id,
      };
    } else if (type === 'response.failed') {
      const error = event.response?.error;
      throw modelErrorFor(undefined, error?.message ?? 'the response failed', String(error?.code ?? ''));
    } else if (type === 'error') {
      throw modelErrorFor(undefined, event.message, String(event.code ?? ''));
    }
    return undefined;
  }
}

/**
 * One event's data, parsed once. An `{ "error": … }` object becomes the SDK's APIError, as its own
 * stream reader would throw it (the Responses API's `error` event is an event of its own, taken above).
 */
function parseEvent(data: string, headers: Headers | undefined): ResponseStreamEvent {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new ModelError(
      'UPSTREAM_MALFORMED',
      'the model upstream sent a malformed stream: an event whose data is not JSON',
      false,
    );
  }
  const event = (typeof value === 'object' && value !== null ? value : {}) as {
    type?: unknown;
    error?: unknown;
  };
  if (typeof event.error === 'object' && event.error !== null) {
    throw new APIError(undefined, event.error, undefined, headers);
  }
  if (typeof event.type !== 'string') {
    throw new ModelError('UPSTREAM_MALFORMED', 'the model upstream sent an event without a type', false);
  }
  return value as ResponseStreamEvent;
}

function isFunctionCall(item: unknown): boolean {
  return typeof item === 'object' && item !== null && (item as { type?: unknown }).type === 'function_call';
}

function usageOf(usage: ResponseUsage | null | undefined): Usage {
  if (!usage) return { promptTokens: 0, completionTokens: 0 };
  return {
    promptTokens: usage.input_tokens,
    completionTokens: usage.output_tokens,
    cacheReadTokens: usage.input_tokens_details?.cached_tokens ?? 0,
    reasoningTokens: usage.output_tokens_details?.reasoning_tokens ?? 0,
  };
}
