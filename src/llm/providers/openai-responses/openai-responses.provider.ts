import OpenAI from 'openai';
import type { ResponseStreamEvent, ResponseUsage } from 'openai/resources/responses/responses';
import type { AppConfig } from '../../../config/app-config';
import { ChunkNormalizer } from '../../chunk-normalizer';
import {
  ModelError,
  type ModelCapabilities,
  type ModelProvider,
  type ModelRequest,
  type ModelStreamEvent,
  type Usage,
} from '../../model-provider';
import { abortReason } from '../../upstream-call';
import { mapUpstreamError, modelErrorFor } from '../../upstream-error.mapper';
import { OPENAI_BASE_URL } from '../openai/openai.provider';
import { toolCallIdsIn } from '../openai/openai-request.mapper';
import { OPENAI_RESPONSES, toResponseParams } from './responses-request.mapper';
import { sdkClientOptions } from '../sdk-options';

function noop(): void {}

/** How the response ended, as the Chat Completions vocabulary of `finishReason` says it. */
interface Ending {
  finishReason: string;
  usage: ResponseUsage | null | undefined;
  responseId: string;
}

/**
 * OpenAI's Responses API (`openai-responses/<model>`), streamed and stateless (`store: false`)
 * through the official SDK (same key, base URL and LLM_HEADERS as `openai`). Its events are fed
 * to the shared ChunkNormalizer as the Chat Completions deltas they amount to (text, function-call
 * arguments by output index, reasoning summaries as reasoning), so limits, storable text and tool
 * calls work as for every provider; the encrypted reasoning items come back as ProviderData.
 */
export class OpenAiResponsesProvider implements ModelProvider {
  readonly capabilities: ModelCapabilities = { reasoning: true, promptCaching: true, providerData: true };
  private readonly client: OpenAI;
  private readonly maxOutputTokens: number;

  constructor(config: AppConfig) {
    this.client = new OpenAI({
      apiKey: config.llm.apiKey,
      baseURL: config.llm.baseUrl ?? OPENAI_BASE_URL,
      organization: null,
      project: null,
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
    const params = toResponseParams(request, request.maxOutputTokens ?? this.maxOutputTokens);
    const normalizer = new ChunkNormalizer({ reservedToolCallIds: toolCallIdsIn(request.messages) });
    const reasoningItems = new Map<number, unknown>();
    const out: ModelStreamEvent[] = [];
    let ending: Ending | undefined;
    let events: AsyncIterator<ResponseStreamEvent>;
    try {
      events = (await this.client.responses.create(params, { signal }))[Symbol.asyncIterator]();
    } catch (error) {
      throw failure(error, signal);
    }
    try {
      while (ending === undefined && !normalizer.cut) {
        let next: IteratorResult<ResponseStreamEvent>;
        try {
          next = await events.next();
        } catch (error) {
          throw failure(error, signal);
        }
        alive();
        if (next.done) break;
        ending = this.take(next.value, normalizer, reasoningItems, out);
        for (let i = 0; i < out.length; i++) yield out[i];
        out.length = 0;
      }
      if (signal.aborted) throw abortReason(signal);
      if (ending === undefined && !normalizer.cut) {
        throw new ModelError('UPSTREAM_CONNECTION', 'upstream closed the stream before finishing', true);
      }
      // The normalizer's finish carries the tool calls; the reason and usage are the response's.
      if (ending !== undefined)
        normalizer.push({ choices: [{ delta: {}, finish_reason: ending.finishReason }] }, out);
      normalizer.end(out);
      const items = [...reasoningItems.entries()].sort(([a], [b]) => a - b).map(([, item]) => item);
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
      await events.return?.();
    }
  }

  /** One Responses event into the normalizer; the ending when the response is over. */
  private take(
    event: ResponseStreamEvent,
    normalizer: ChunkNormalizer,
    reasoningItems: Map<number, unknown>,
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
      if (event.item.type === 'function_call') {
        const { call_id, name, arguments: args } = event.item;
        delta({
          tool_calls: [{ index: event.output_index, id: call_id, function: { name, arguments: args } }],
        });
      }
    } else if (type === 'response.function_call_arguments.delta') {
      delta({ tool_calls: [{ index: event.output_index, function: { arguments: event.delta } }] });
    } else if (type === 'response.output_item.done') {
      // Kept whole, encrypted content and all, to go back unchanged with the next request.
      if (event.item.type === 'reasoning') reasoningItems.set(event.output_index, event.item);
    } else if (type === 'response.completed') {
      const calls = event.response.output.some((item) => item.type === 'function_call');
      return {
        finishReason: calls ? 'tool_calls' : 'stop',
        usage: event.response.usage,
        responseId: event.response.id,
      };
    } else if (type === 'response.incomplete') {
      const reason = event.response.incomplete_details?.reason;
      return {
        finishReason: reason === 'content_filter' ? 'content_filter' : 'length',
        usage: event.response.usage,
        responseId: event.response.id,
      };
    } else if (type === 'response.failed') {
      const error = event.response.error;
      throw modelErrorFor(undefined, error?.message ?? 'the response failed', String(error?.code ?? ''));
    } else if (type === 'error') {
      throw modelErrorFor(undefined, event.message, String(event.code ?? ''));
    }
    return undefined;
  }
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

function failure(error: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return abortReason(signal);
  return mapUpstreamError(error);
}
