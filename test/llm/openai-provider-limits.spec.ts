import { ModelError } from '../../src/llm/model-provider';
import { OpenAiProvider } from '../../src/llm/openai.provider';
import { chunksThen, endless, FakeUpstream, raw, text } from '../support/fake-upstream';
import { chatChunk, sseData, SSE_DONE } from '../support/sse-chunks';
import { collect, llmConfig, neverAborted, userRequest } from './llm-harness';

/** What the provider holds one model call to, over real HTTP through the real SDK. */
describe('OpenAiProvider limits and the end of a stream', () => {
  let upstream: FakeUpstream;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
  });
  afterEach(() => upstream.reset());
  afterAll(() => upstream.close());

  const provider = (env: Record<string, string> = {}) => new OpenAiProvider(llmConfig(upstream.baseUrl, env));

  it('cuts an endless answer at ANSWER_MAX_BYTES, closes the request and finishes with length', async () => {
    upstream.enqueue(endless('ab€'));
    const result = await collect(provider({ ANSWER_MAX_BYTES: '1000' }).stream(userRequest('go'), neverAborted()));
    expect(result.error).toBeUndefined();
    expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(1000);
    // 'ab€' is 5 bytes: 200 whole pieces fit exactly.
    expect(result.text).toBe('ab€'.repeat(200));
    expect(result.finish).toMatchObject({ finishReason: 'length', toolCalls: [] });
    await upstream.waitForAborted(1);
  });

  it('cuts endless reasoning too, so an upstream that never answers still ends', async () => {
    upstream.enqueue(endless('hmm '.repeat(256), { reasoning: true }));
    const result = await collect(provider().stream(userRequest('go'), neverAborted()));
    expect(result.error).toBeUndefined();
    expect(result.text).toBe('');
    expect(result.finish?.finishReason).toBe('length');
    await upstream.waitForAborted(1);
  });

  it('finishes with stop on [DONE] after text without a finish_reason, and reads nothing after [DONE]', async () => {
    upstream.enqueue(
      raw(sseData(chatChunk({ content: 'Hi' })) + SSE_DONE + sseData(chatChunk({ content: ' ignored' }))),
    );
    const result = await collect(provider().stream(userRequest('go'), neverAborted()));
    expect(result.error).toBeUndefined();
    expect(result.text).toBe('Hi');
    expect(result.finish?.finishReason).toBe('stop');
  });

  it('fails retryable UPSTREAM_CONNECTION when the body ends with neither [DONE] nor a finish_reason', async () => {
    upstream.enqueue(raw(sseData(chatChunk({ content: 'Hi' }))));
    const result = await collect(provider().stream(userRequest('go'), neverAborted()));
    expect(result.text).toBe('Hi');
    expect(result.error).toBeInstanceOf(ModelError);
    expect(result.error).toMatchObject({ code: 'UPSTREAM_CONNECTION', retryable: true });
  });

  it('times a silent upstream out as retryable UPSTREAM_TIMEOUT after LLM_IDLE_TIMEOUT_MS, and closes the request', async () => {
    upstream.enqueue(chunksThen(['Hel'], 'hang'));
    const result = await collect(
      provider({ LLM_IDLE_TIMEOUT_MS: '1000' }).stream(userRequest('go'), neverAborted()),
    );
    expect(result.text).toBe('Hel');
    expect(result.error).toBeInstanceOf(ModelError);
    expect(result.error).toMatchObject({ code: 'UPSTREAM_TIMEOUT', retryable: true });
    await upstream.waitForAborted(1);
  });

  it('is not timed out by a slow upstream that keeps sending', async () => {
    upstream.enqueue(text('one two three four', { delayMs: 400 }));
    const result = await collect(
      provider({ LLM_IDLE_TIMEOUT_MS: '1000' }).stream(userRequest('go'), neverAborted()),
    );
    expect(result.error).toBeUndefined();
    expect(result.text).toBe('one two three four');
  });

  it('keeps the connection for the next call after a [DONE] stream (the body is read to its end)', async () => {
    const fresh = await FakeUpstream.start();
    try {
      // The body's end comes a moment after [DONE]: a client that closes the body at [DONE] opens a
      // connection per call; one that reads to the end reuses one (undici may open a second early on).
      fresh.fallback = text('one two', { delayMs: 5 });
      const p = new OpenAiProvider(llmConfig(fresh.baseUrl));
      for (let i = 0; i < 10; i++) {
        expect((await collect(p.stream(userRequest(`call ${i}`), neverAborted()))).error).toBeUndefined();
      }
      expect(fresh.requests).toHaveLength(10);
      expect(fresh.connections).toBeLessThanOrEqual(3);
    } finally {
      await fresh.close();
    }
  });
});
