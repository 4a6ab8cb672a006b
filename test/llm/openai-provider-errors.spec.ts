import { ModelError, type ModelProvider } from '../../src/llm/model-provider';
import { ModelProviders } from '../../src/llm/model-providers.service';
import { OpenAiProvider } from '../../src/llm/providers/openai/openai.provider';
import { chunksThen, FakeUpstream, hang, raw, status, text } from '../support/fake-upstream';
import { chatChunk, sseData, SSE_DONE } from '../support/sse-chunks';
import { collect, llmConfig, neverAborted, userRequest } from './llm-harness';

describe('OpenAiProvider failures', () => {
  let upstream: FakeUpstream;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
  });
  afterEach(() => upstream.reset());
  afterAll(() => upstream.close());

  function provider(maxRetries = 2): OpenAiProvider {
    return new OpenAiProvider(llmConfig(upstream.baseUrl, { LLM_MAX_RETRIES: String(maxRetries) }));
  }

  /** The provider as every call reaches it: through ModelProviders, which owns the retries. */
  function retrying(maxRetries: number): Pick<ModelProvider, 'stream'> {
    const config = llmConfig(upstream.baseUrl, { LLM_MAX_RETRIES: String(maxRetries) });
    return new ModelProviders(config, [
      { name: 'openai', baseUrl: upstream.baseUrl, provider: new OpenAiProvider(config) },
    ]);
  }

  function run(p: Pick<ModelProvider, 'stream'>, signal = neverAborted()) {
    return collect(p.stream(userRequest('hi'), signal));
  }

  describe('HTTP errors before the stream', () => {
    it('retries a 500 (honouring retry-after-ms) and then fails retryable UPSTREAM_UNAVAILABLE', async () => {
      upstream.fallback = status(500, undefined, { 'retry-after-ms': '1' });
      const result = await run(retrying(2));
      expect(result.error).toBeInstanceOf(ModelError);
      expect(result.error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true, status: 500 });
      expect(upstream.requests).toHaveLength(3);
      expect(result.events).toEqual([]);
    });

    it('backs off on its own between retries when the upstream gives no retry header', async () => {
      upstream.enqueue(status(503), text('recovered'));
      const result = await run(retrying(1));
      expect(result.text).toBe('recovered');
      expect(upstream.requests).toHaveLength(2);
      // Our retry, not the SDK's: its own are off, so it counts every request as a first one.
      expect(upstream.requests[1].headers['x-stainless-retry-count']).toBe('0');
    });

    it('retries a 429 after its retry-after-ms and then succeeds', async () => {
      upstream.enqueue(status(429, undefined, { 'retry-after-ms': '60' }), text('Hello world'));
      const result = await run(retrying(2));
      expect(result.error).toBeUndefined();
      expect(result.text).toBe('Hello world');
      expect(upstream.requests).toHaveLength(2);
      expect(upstream.requests[1].headers['x-stainless-retry-count']).toBe('0');
    });

    it('honours a retry-after header given in seconds', async () => {
      upstream.enqueue(status(429, undefined, { 'retry-after': '0.05' }), text('ok'));
      const result = await run(retrying(1));
      expect(result.text).toBe('ok');
      expect(upstream.requests).toHaveLength(2);
      expect(upstream.requests[1].headers['x-stainless-retry-count']).toBe('0');
    });

    it('fails retryable UPSTREAM_RATE_LIMITED once 429 retries are exhausted', async () => {
      upstream.fallback = status(
        429,
        { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } },
        { 'retry-after-ms': '1' },
      );
      const result = await run(retrying(1));
      expect(result.error).toMatchObject({ code: 'UPSTREAM_RATE_LIMITED', retryable: true, status: 429 });
      expect((result.error as Error).message).toContain('Rate limit reached');
      expect(upstream.requests).toHaveLength(2);
    });

    it.each([401, 403])('fails %i as UPSTREAM_AUTH without retrying', async (code) => {
      upstream.fallback = status(code);
      const result = await run(provider(2));
      expect(result.error).toMatchObject({ code: 'UPSTREAM_AUTH', retryable: false, status: code });
      expect(upstream.requests).toHaveLength(1);
    });

    it.each([400, 404, 413, 422])('fails %i as UPSTREAM_BAD_REQUEST without retrying', async (code) => {
      upstream.fallback = status(code, {
        error: { message: 'model "x" does not exist', type: 'invalid_request_error', code: null },
      });
      const result = await run(provider(2));
      expect(result.error).toMatchObject({ code: 'UPSTREAM_BAD_REQUEST', retryable: false, status: code });
      expect((result.error as Error).message).toContain('model "x" does not exist');
      expect(upstream.requests).toHaveLength(1);
    });

    it('fails retryable UPSTREAM_CONNECTION when nothing listens at the base URL', async () => {
      const closed = await FakeUpstream.start();
      await closed.close();
      const p = new OpenAiProvider(llmConfig(closed.baseUrl, { LLM_MAX_RETRIES: '0' }));
      const result = await run(p);
      expect(result.error).toMatchObject({ code: 'UPSTREAM_CONNECTION', retryable: true });
    });
  });

  describe('failures inside a 200 stream', () => {
    it('fails UPSTREAM_MALFORMED (not retryable) on a chunk that is not JSON, after the text before it', async () => {
      upstream.enqueue(chunksThen(['Hel', 'lo'], 'malformed'));
      const result = await run(provider());
      expect(result.text).toBe('Hello');
      expect(result.error).toMatchObject({ code: 'UPSTREAM_MALFORMED', retryable: false });
      expect(upstream.requests).toHaveLength(1);
    });

    it('fails UPSTREAM_ERROR, not retryable, on a mid-stream error object that gives no transient reason', async () => {
      upstream.enqueue(chunksThen(['partial'], 'error-object'));
      const result = await run(provider());
      expect(result.text).toBe('partial');
      expect(result.error).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: false });
      expect((result.error as ModelError).status).toBeUndefined();
      expect((result.error as Error).message).toContain('The model produced invalid output');
    });

    it.each([
      [
        'says it is overloaded',
        { message: 'The server is overloaded, please try later', type: 'server_error', code: null },
      ],
      ['carries a 5xx code', { object: 'error', message: 'engine died', type: 'InternalError', code: 503 }],
      ['says rate limit', { message: 'Rate limit exceeded for this model', code: 'rate_limit_exceeded' }],
    ])('fails UPSTREAM_ERROR retryable on a mid-stream error object that %s', async (_why, error) => {
      upstream.enqueue(chunksThen(['x'], 'error-object', { error }));
      const result = await run(provider());
      expect(result.error).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    });

    it('fails UPSTREAM_ERROR retryable on an Anthropic `event: error` overloaded_error', async () => {
      upstream.enqueue(
        raw(
          'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":5,"output_tokens":1}}}\n\n' +
            'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n' +
            'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
        ),
      );
      const result = await run(provider());
      expect(result.text).toBe('Hi');
      expect(result.error).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    });

    it('yields the text received before a connection reset, then fails retryable UPSTREAM_CONNECTION', async () => {
      upstream.enqueue(chunksThen(['Hello', ' wor'], 'reset'));
      const result = await run(provider());
      // Chunks that arrive together reach the loop as one delta.
      expect(result.events).toEqual([{ type: 'text', delta: 'Hello wor' }]);
      expect(result.error).toMatchObject({ code: 'UPSTREAM_CONNECTION', retryable: true });
    });

    it('fails retryable UPSTREAM_CONNECTION when the stream ends cleanly but before any finish_reason', async () => {
      upstream.enqueue(raw(sseData(chatChunk({ role: 'assistant', content: 'Hel' }))));
      const result = await run(provider());
      expect(result.text).toBe('Hel');
      expect(result.error).toMatchObject({ code: 'UPSTREAM_CONNECTION', retryable: true });
      expect((result.error as Error).message).toBe('upstream closed the stream before finishing');
    });

    it('finishes with stop on [DONE] without any finish_reason (the upstream said it was done)', async () => {
      upstream.enqueue(raw(sseData(chatChunk({ content: 'Hel' })) + SSE_DONE));
      const result = await run(provider());
      expect(result.error).toBeUndefined();
      expect(result.text).toBe('Hel');
      expect(result.finish?.finishReason).toBe('stop');
    });

    it('ends normally when the stream stops after its finish_reason without [DONE] or usage', async () => {
      upstream.enqueue(raw(sseData(chatChunk({ content: 'Hi' })) + sseData(chatChunk({}, 'stop'))));
      const result = await run(provider());
      expect(result.error).toBeUndefined();
      expect(result.finish).toEqual({
        type: 'finish',
        finishReason: 'stop',
        usage: { promptTokens: 0, completionTokens: 0 },
        toolCalls: [],
        responseId: 'chatcmpl-fake',
      });
    });
  });

  describe('aborts', () => {
    it('rethrows the abort (not a ModelError) when the signal fires while waiting for headers, and the upstream sees the request go', async () => {
      upstream.enqueue(hang());
      const controller = new AbortController();
      const pending = run(provider(), controller.signal);
      await upstream.waitForRequests(1);
      controller.abort();
      const result = await pending;
      expect(result.error).not.toBeInstanceOf(ModelError);
      expect(result.error).toBe(controller.signal.reason);
      await upstream.waitForAborted(1);
      expect(upstream.requests[0].aborted).toBe(true);
    });

    it('rethrows the abort mid-stream after the text so far', async () => {
      upstream.enqueue(chunksThen(['Hel'], 'hang'));
      const controller = new AbortController();
      const events: string[] = [];
      let thrown: unknown;
      try {
        for await (const event of provider().stream(userRequest('hi'), controller.signal)) {
          if (event.type === 'text') events.push(event.delta);
          controller.abort(new Error('cancelled by the user'));
        }
      } catch (error) {
        thrown = error;
      }
      expect(events).toEqual(['Hel']);
      expect(thrown).toEqual(new Error('cancelled by the user'));
      await upstream.waitForAborted(1);
    });

    it('stops a retry backoff promptly when the signal fires', async () => {
      upstream.fallback = status(500, undefined, { 'retry-after-ms': '10000' });
      const controller = new AbortController();
      const pending = run(provider(2), controller.signal);
      await upstream.waitForRequests(1);
      controller.abort();
      const result = await pending;
      expect(result.error).not.toBeInstanceOf(ModelError);
      // No retry after the abort (one would come after the 10 s backoff).
      expect(upstream.requests).toHaveLength(1);
    });

    it('rejects at once when the signal is already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      const result = await run(provider(), controller.signal);
      expect(result.error).not.toBeInstanceOf(ModelError);
      expect(upstream.requests).toHaveLength(0);
    });

    it('aborts the upstream request when the consumer stops iterating early', async () => {
      upstream.enqueue(chunksThen(['one', 'two'], 'hang'));
      for await (const event of provider().stream(userRequest('hi'), neverAborted())) {
        expect(event).toEqual({ type: 'text', delta: 'onetwo' });
        break;
      }
      await upstream.waitForAborted(1);
    });
  });
});
