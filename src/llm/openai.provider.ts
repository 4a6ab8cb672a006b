import OpenAI, { type ClientOptions } from 'openai';
import type { AppConfig } from '../config/app-config';
import { ChunkNormalizer } from './chunk-normalizer';
import { ModelError, type ModelProvider, type ModelRequest, type ModelStreamEvent } from './model-provider';
import { toChatCompletionParams, toolCallIdsIn } from './openai-request.mapper';
import { mapUpstreamError } from './upstream-error.mapper';

const OPENAI_BASE_URL = 'https://api.openai.com/v1';

function noop(): void {}

/** The SDK logs to the console by default (e.g. a malformed chunk); our logs are our own. */
const SILENT_LOGGER: NonNullable<ClientOptions['logger']> = {
  error: noop,
  warn: noop,
  info: noop,
  debug: noop,
};

/**
 * Any OpenAI-compatible Chat Completions endpoint, through the official SDK. The SDK retries 429,
 * 408/409, 5xx and connection failures before the body starts (honouring retry-after-ms and
 * retry-after); what it cannot retry becomes a ModelError here.
 */
export class OpenAiProvider implements ModelProvider {
  private readonly client: OpenAI;
  private readonly recoverToolCallsFromText: boolean;

  constructor(config: AppConfig) {
    this.client = new OpenAI({
      apiKey: config.llm.apiKey,
      // Explicit values so the SDK doesn't fall back to OPENAI_* variables behind the config's back.
      baseURL: config.llm.baseUrl ?? OPENAI_BASE_URL,
      organization: null,
      project: null,
      maxRetries: config.llm.maxRetries,
      logger: SILENT_LOGGER,
      logLevel: 'off',
    });
    this.recoverToolCallsFromText = config.toolCallTextRecovery;
  }

  async *stream(
    request: ModelRequest,
    signal: AbortSignal,
  ): AsyncGenerator<ModelStreamEvent, void, undefined> {
    const normalizer = new ChunkNormalizer({
      recoverToolCallsFromText: this.recoverToolCallsFromText,
      reservedToolCallIds: toolCallIdsIn(request.messages),
    });
    let chunks: AsyncIterator<unknown>;
    try {
      const stream = await this.client.chat.completions.create(toChatCompletionParams(request), { signal });
      chunks = stream[Symbol.asyncIterator]();
    } catch (error) {
      throw failure(error, signal);
    }
    const out: ModelStreamEvent[] = [];
    let drained = false;
    try {
      for (;;) {
        let next: IteratorResult<unknown>;
        try {
          next = await chunks.next();
        } catch (error) {
          drained = true;
          throw failure(error, signal);
        }
        if (next.done === true) break;
        normalizer.push(next.value, out);
        for (let i = 0; i < out.length; i++) yield out[i];
        out.length = 0;
      }
      drained = true;
    } finally {
      // The consumer stopped early (or the normalizer threw): closing the SDK stream aborts the request.
      if (!drained) await chunks.return?.();
    }
    // The SDK ends iteration quietly both when our signal aborts and on some transport errors.
    if (signal.aborted) throw abortReason(signal);
    if (!normalizer.finished) {
      throw new ModelError('UPSTREAM_CONNECTION', 'upstream closed the stream before finishing', true);
    }
    normalizer.end(out);
    for (let i = 0; i < out.length; i++) yield out[i];
  }
}

/** An abort is not an upstream failure: it is rethrown as the signal's reason, for the caller to recognise. */
function failure(error: unknown, signal: AbortSignal): unknown {
  return signal.aborted ? abortReason(signal) : mapUpstreamError(error);
}

/** Whatever the signal was aborted with (a DOMException AbortError unless the caller chose a reason). */
function abortReason(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  return reason ?? new DOMException('The model request was aborted', 'AbortError');
}
