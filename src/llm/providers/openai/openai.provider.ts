import OpenAI, { APIError } from 'openai';
import type { AppConfig } from '../../../config/app-config';
import { ChunkNormalizer } from '../../chunk-normalizer';
import {
  ModelError,
  type ModelProvider,
  type ModelRequest,
  type ModelStreamEvent,
} from '../../model-provider';
import { toChatCompletionParams, toolCallIdsIn } from './openai-request.mapper';
import { joinDeltas } from '../../join-deltas';
import { createNodeFetch } from '../../node-fetch';
import { readChunk } from '../../chunk-read';
import { SseParser } from '../../sse-parser';
import { abortReason, UpstreamCall } from '../../upstream-call';
import { sdkClientOptions } from '../sdk-options';
import type { ProviderEndpoint } from '../provider-definition';
import { bodyChunksOf, bodyEnd, upstreamFailure } from './streamed-body';

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** OpenAI's endpoint: OPENAI_API_KEY (optional: a local server may need none) and OPENAI_BASE_URL. */
export const OPENAI_ENDPOINT: ProviderEndpoint = {
  name: 'OPENAI',
  defaultBaseUrl: OPENAI_BASE_URL,
  needsKey: false,
};

/** What the SDK is given as the key when OPENAI_API_KEY is unset: a local server takes any. */
export const NO_API_KEY = 'not-set';

/**
 * After `[DONE]`, how long the end of the body may take to arrive. Reading a body to its end lets
 * the connection serve the next call (no new TCP and TLS handshake); the end normally comes with
 * `[DONE]` or right after it, and a server that holds the body open past this is cut off.
 */
export const BODY_END_AFTER_DONE_MS = 250;

function noop(): void {}

/**
 * Any OpenAI-compatible Chat Completions endpoint (`openai/<model>`). The official SDK sends the
 * request: auth, LLM_HEADERS, retries of 429, 408/409, 5xx and connection failures before the body
 * starts (honouring retry-after-ms and retry-after), and its errors. The streamed body is ours to
 * read (docs/decisions/007-raw-sse-parsing.md): one pass from bytes to ChunkNormalizer, which sees
 * `[DONE]`, costs one JSON.parse per event, and stops the request once the arguments or reasoning
 * outgrow their memory bounds (STREAM_LIMITS). The idle timeout and the answer budget are held by
 * ModelProviders for every provider (model-stream-guard.ts).
 */
export class OpenAiProvider implements ModelProvider {
  private readonly client: OpenAI;
  private readonly recoverToolCallsFromText: boolean;
  private readonly maxOutputTokens: number;

  /** `endpoint`: OPENAI's by default; another provider speaking Chat Completions names its own (azure/). */
  constructor(config: AppConfig, endpoint: ProviderEndpoint = OPENAI_ENDPOINT) {
    const { apiKey, baseUrl } = config.llm.endpoints[endpoint.name];
    this.client = new OpenAI({
      // No key is a key the SDK must still be given: a local server takes any (start-up says so).
      apiKey: apiKey ?? NO_API_KEY,
      // Explicit values so the SDK doesn't fall back to OPENAI_* variables behind the config's back.
      baseURL: baseUrl ?? endpoint.defaultBaseUrl ?? OPENAI_BASE_URL,
      organization: null,
      project: null,
      ...sdkClientOptions(config),
      // A streamed answer's body is read raw off the socket (see nodeFetch); any other as fetch gives it.
      fetch: createNodeFetch(),
    });
    this.recoverToolCallsFromText = config.toolCallTextRecovery;
    this.maxOutputTokens = config.llm.maxOutputTokens;
  }

  async *stream(
    request: ModelRequest,
    signal: AbortSignal,
    alive: () => void = noop,
  ): AsyncGenerator<ModelStreamEvent, void, undefined> {
    if (signal.aborted) throw abortReason(signal);
    const normalizer = new ChunkNormalizer({
      recoverToolCallsFromText: this.recoverToolCallsFromText,
      reservedToolCallIds: toolCallIdsIn(request.messages),
    });
    const out: ModelStreamEvent[] = [];
    let sawDone = false;
    let headers: Headers | undefined;
    const parser = new SseParser((data, event) => {
      if (data === '[DONE]') {
        sawDone = true;
        return true;
      }
      normalizer.push(parseEvent(data, event, headers), out);
      return normalizer.cut;
    });
    const call = new UpstreamCall(signal);
    let chunks: AsyncIterator<Uint8Array> | undefined;
    let atEnd = false;
    try {
      let response: Response;
      try {
        response = await this.client.chat.completions
          .create(toChatCompletionParams(request, request.maxOutputTokens ?? this.maxOutputTokens), {
            signal: call.signal,
          })
          .asResponse();
      } catch (error) {
        throw call.failure(error);
      }
      alive();
      headers = response.headers;
      chunks = bodyChunksOf(response);
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
      if (sawDone && !atEnd) {
        atEnd = await bodyEnd(chunks, BODY_END_AFTER_DONE_MS);
      }
      // A transport failure can end a body quietly; an abort or the idle timeout is not an end.
      call.throwIfStopped();
      if (!sawDone && !normalizer.cut && !normalizer.finished) {
        throw new ModelError('UPSTREAM_CONNECTION', 'upstream closed the stream before finishing', true);
      }
      normalizer.end(out);
      // Cut (or a body held open after [DONE]): close the request before the step goes on.
      if (!atEnd) call.close(true);
      joinDeltas(out);
      for (let i = 0; i < out.length; i++) yield out[i];
    } finally {
      // The consumer stopped early, or a failure: closing aborts the request.
      call.close(!atEnd);
    }
  }
}

/**
 * One event's data as a chunk for the normalizer: parsed once; error objects sent inside a 200
 * stream (`data: {"error": …}`, Anthropic's `event: error`) become the SDK's APIError, as its own
 * stream reader would throw them, for mapUpstreamError to judge.
 */
function parseEvent(data: string, event: string, headers: Headers | undefined): unknown {
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
  const error =
    typeof value === 'object' && value !== null ? (value as { error?: unknown }).error : undefined;
  if (event === 'error') throw new APIError(undefined, (error ?? value) as object, undefined, headers);
  if (error) throw new APIError(undefined, error, undefined, headers);
  return value;
}
