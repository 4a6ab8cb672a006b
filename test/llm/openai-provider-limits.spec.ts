import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ModelError, type ModelRequest } from '../../src/llm/model-provider';
import { guardModelStream } from '../../src/llm/model-stream-guard';
import { OpenAiProvider } from '../../src/llm/providers/openai/openai.provider';
import { chunksThen, endless, FakeUpstream, raw, text } from '../support/fake-upstream';
import { chatChunk, sseData, SSE_DONE } from '../support/sse-chunks';
import { eventually } from '../support/eventually';
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
  /** The provider as the loop calls it: held to the idle timeout and the answer budget (ModelProviders). */
  const guarded = (env: Record<string, string>) => {
    const config = llmConfig(upstream.baseUrl, env);
    const p = new OpenAiProvider(config);
    return {
      stream: (request: ModelRequest, signal: AbortSignal) =>
        guardModelStream((s, alive) => p.stream(request, s, alive), config.llm, signal),
    };
  };

  it('cuts an endless answer at ANSWER_MAX_BYTES, closes the request and finishes with length', async () => {
    upstream.enqueue(endless('ab€'));
    const result = await collect(
      guarded({ ANSWER_MAX_BYTES: '1000' }).stream(userRequest('go'), neverAborted()),
    );
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
      guarded({ LLM_IDLE_TIMEOUT_MS: '1000' }).stream(userRequest('go'), neverAborted()),
    );
    expect(result.text).toBe('Hel');
    expect(result.error).toBeInstanceOf(ModelError);
    expect(result.error).toMatchObject({ code: 'UPSTREAM_TIMEOUT', retryable: true });
    await upstream.waitForAborted(1);
  });

  it('is not timed out by a slow upstream that keeps sending', async () => {
    upstream.enqueue(text('one two three four', { delayMs: 400 }));
    const result = await collect(
      guarded({ LLM_IDLE_TIMEOUT_MS: '1000' }).stream(userRequest('go'), neverAborted()),
    );
    expect(result.error).toBeUndefined();
    expect(result.text).toBe('one two three four');
  });

  it('reads the body to its end after [DONE], so the next call reuses the connection', async () => {
    // The body's end comes a moment after [DONE] (a separate write): a client that closes the body at
    // [DONE] needs a new connection for every call.
    let connections = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(sseData(chatChunk({ content: 'ok' }, 'stop')) + SSE_DONE);
        setTimeout(() => res.end(), 20);
      });
    });
    server.keepAliveTimeout = 60_000;
    server.on('connection', () => (connections += 1));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const { port } = server.address() as AddressInfo;
      const p = new OpenAiProvider(llmConfig(`http://127.0.0.1:${port}/v1`));
      for (let i = 0; i < 10; i++) {
        const result = await collect(p.stream(userRequest(`call ${i}`), neverAborted()));
        expect(result.text).toBe('ok');
        expect(result.finish?.finishReason).toBe('stop');
      }
      // undici may open a second connection early on; closing at [DONE] would take ten.
      expect(connections).toBeLessThanOrEqual(3);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    }
  });
  it('finishes after [DONE] even when the upstream holds the body open, and then closes the request', async () => {
    let closed = false;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(sseData(chatChunk({ content: 'ok' })) + SSE_DONE);
        res.on('close', () => (closed = true));
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const { port } = server.address() as AddressInfo;
      const p = new OpenAiProvider(llmConfig(`http://127.0.0.1:${port}/v1`));
      const result = await collect(p.stream(userRequest('go'), neverAborted()));
      expect(result.error).toBeUndefined();
      expect(result.finish?.finishReason).toBe('stop');
      await eventually(() => closed);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    }
  });
});
