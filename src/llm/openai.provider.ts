import OpenAI, { APIError, type ClientOptions } from 'openai';
import type { AppConfig } from '../config/app-config';
import { BodyChunks } from './body-chunks';
import { ChunkNormalizer } from './chunk-normalizer';
import { ModelError, type ModelProvider, type ModelRequest, type ModelStreamEvent } from './model-provider';
import { toChatCompletionParams, toolCallIdsIn } from './openai-request.mapper';
import { createNodeFetch, rawBody } from './node-fetch';
import { SseParser } from './sse-parser';
import { abortReason, UpstreamCall } from './upstream-call';

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * After `[DONE]`, how long the end of the body may take to arrive. Reading a body to its end lets
 * the connection serve the next call (no new TCP and TLS handshake); the end normally comes with
 * `[DONE]` or right after it, and a server that holds the body open past this is cut off.
 */
const BODY_END_AFTER_DONE_MS = 250;

function noop(): void {}

/** The SDK logs to the console by default (e.g. a malformed chunk); our logs are our own. */
const SILENT_LOGGER: NonNullable<ClientOptions['logger']> = {
  error: noop,
  warn: noop,
  info: noop,
  debug: noop,
};

/**
 * Any OpenAI-compatible Chat Completions endpoint. The official SDK sends the request: auth,
 * headers, retries of 429, 408/409, 5xx and connection failures before the body starts (honouring
 * retry-after-ms and retry-after), and its errors. The streamed body is ours to read
 * (docs/decisions/007-raw-sse-parsing.md): one pass from bytes to ChunkNormalizer, which sees
 * `[DONE]`, costs one JSON.parse per event, and stops the request as soon as the call's budget is
 * spent. A silent upstream fails after LLM_IDLE_TIMEOUT_MS as a retryable UPSTREAM_TIMEOUT.
 */
export class OpenAiProvider implements ModelProvider {
  private readonly client: OpenAI;
  private readonly recoverToolCallsFromText: boolean;
  private readonly idleTimeoutMs: number;
  private readonly answerMaxBytes: number;

  constructor(config: AppConfig) {
    this.client = new OpenAI({
      apiKey: config.llm.apiKey,
      // Explicit values so the SDK doesn't fall back to OPENAI_* variables behind the config's back.
      baseURL: config.llm.baseUrl ?? OPENAI_BASE_URL,
      organization: null,
      project: null,
      maxRetries: config.llm.maxRetries,
      // The client only ever streams chat completions: every 2xx body is read raw (see nodeFetch).
      fetch: createNodeFetch(),
      logger: SILENT_LOGGER,
      logLevel: 'off',
    });
    this.recoverToolCallsFromText = config.toolCallTextRecovery;
    this.idleTimeoutMs = config.llm.idleTimeoutMs;
    this.answerMaxBytes = config.llm.answerMaxBytes;
  }

  async *stream(
    request: ModelRequest,
    signal: AbortSignal,
  ): AsyncGenerator<ModelStreamEvent, void, undefined> {
    if (signal.aborted) throw abortReason(signal);
    const normalizer = new ChunkNormalizer({
      recoverToolCallsFromText: this.recoverToolCallsFromText,
      reservedToolCallIds: toolCallIdsIn(request.messages),
      answerMaxBytes: this.answerMaxBytes,
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
    const call = new UpstreamCall(signal, this.idleTimeoutMs);
    let chunks: AsyncIterator<Uint8Array> | undefined;
    let atEnd = false;
    try {
      let response: Response;
      try {
        response = await this.client.chat.completions
          .create(toChatCompletionParams(request), { signal: call.signal })
          .asResponse();
      } catch (error) {
        throw call.failure(error);
      }
      call.touch();
      headers = response.headers;
      const raw = rawBody(response);
      const body: AsyncIterable<Uint8Array> | null = response.body;
      if (raw !== undefined) chunks = new BodyChunks(raw);
      else if (body !== null) chunks = body[Symbol.asyncIterator]();
      else throw new ModelError('UPSTREAM_MALFORMED', 'the model upstream answered without a body', false);
      while (!parser.done) {
        let read: IteratorResult<Uint8Array>;
        try {
          read = await chunks.next();
        } catch (error) {
          throw call.failure(error);
        }
        call.touch();
        let failed: unknown;
        try {
          if (read.done) {
            atEnd = true;
            parser.end();
          } else {
            parser.push(read.value);
          }
        } catch (error) {
          failed = error;
        }
        // What came before a bad event is still the model's: yield it, then fail.
        joinDeltas(out);
        for (let i = 0; i < out.length; i++) yield out[i];
        out.length = 0;
        // The upstream's failures become ModelErrors; anything else is a bug of ours, thrown as it is.
        if (failed !== undefined) {
          throw failed instanceof ModelError || failed instanceof APIError ? call.failure(failed) : failed;
        }
        if (atEnd) break;
      }
      if (sawDone && !atEnd) {
        // Only the end is left: read it at once, not at the socket's turn, which could outlast the wait.
        if (chunks instanceof BodyChunks) chunks.readNow();
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

/**
 * Joins, in place, each run of text deltas (and of reasoning deltas) that one read of the body
 * brought: the loop then takes one event where the upstream sent several chunks. Nothing is lost —
 * the run's streams see the text of a write as one event anyway (RunEventSink).
 */
function joinDeltas(events: ModelStreamEvent[]): void {
  let kept = 0;
  for (let i = 0; i < events.length; i++) {
    const event = events[i];
    const last = kept > 0 ? events[kept - 1] : undefined;
    if (
      last !== undefined &&
      (event.type === 'text' || event.type === 'reasoning') &&
      last.type === event.type
    ) {
      events[kept - 1] = { type: event.type, delta: last.delta + event.delta };
    } else {
      events[kept++] = event;
    }
  }
  events.length = kept;
}

/** Reads a body to its end, ignoring what it holds; false when it did not end within `ms` or failed. */
async function bodyEnd(chunks: AsyncIterator<Uint8Array>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  try {
    for (;;) {
      const next = chunks.next();
      // Left pending when late: the request is then closed, which rejects it — handled here.
      next.catch(noop);
      const read = await Promise.race([next, late]);
      if (read === 'late') return false;
      if (read.done) return true;
    }
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
