import { loadConfig, type AppConfig } from '../../src/config/app-config';
import { ModelError, type ModelRequest } from '../../src/llm/model-provider';
import { ModelProviders } from '../../src/llm/model-providers.service';
import { PROVIDERS, providerBaseUrl } from '../../src/llm/providers';
import { RetryPolicy, retryAfterMs } from '../../src/llm/retry-policy';
import { anthropicStatus, anthropicText, FakeAnthropic } from '../support/fake-anthropic';
import { FakeResponses, responsesStatus, responsesText } from '../support/fake-responses';
import { FakeUpstream, status, text } from '../support/fake-upstream';
import { collect, neverAborted } from './llm-harness';

/**
 * One retry policy for every provider: ModelProviders sends a call that failed retryably before its
 * first event again (LLM_MAX_RETRIES times), then to a fallback; the official SDKs never retry on
 * their own (each request of theirs says `x-stainless-retry-count: 0`).
 */
describe('the retry policy of every provider', () => {
  let chat: FakeUpstream;
  let responses: FakeResponses;
  let anthropic: FakeAnthropic;

  beforeAll(async () => {
    [chat, responses, anthropic] = await Promise.all([
      FakeUpstream.start(),
      FakeResponses.start(),
      FakeAnthropic.start(),
    ]);
  });
  afterEach(() => {
    chat.reset();
    responses.reset();
    anthropic.reset();
  });
  afterAll(() => Promise.all([chat.close(), responses.close(), anthropic.close()]));

  function config(env: Record<string, string>): AppConfig {
    return loadConfig(
      {
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: chat.baseUrl,
        ANTHROPIC_API_KEY: 'sk-ant-test',
        ANTHROPIC_BASE_URL: anthropic.baseUrl,
        ...env,
      },
      '/tmp',
    );
  }

  /** Every provider as the server registers it, the Responses one pointed at its own fake. */
  function models(env: Record<string, string> = {}): ModelProviders {
    const c = config(env);
    return new ModelProviders(
      c,
      PROVIDERS.map((p) => {
        const baseUrl = p.name === 'openai-responses' ? responses.baseUrl : providerBaseUrl(p, c)!;
        const own = p.name === 'openai-responses' ? config({ ...env, OPENAI_BASE_URL: baseUrl }) : c;
        return { name: p.name, baseUrl, provider: p.create(own) };
      }),
    );
  }

  const ask = (model: string): ModelRequest => ({
    model,
    messages: [{ role: 'user', content: 'go' }],
    tools: [],
  });

  const cases = [
    {
      provider: 'openai',
      fail: () => chat.enqueue(status(503)),
      answer: (t: string) => chat.enqueue(text(t)),
      requests: () => chat.requests,
    },
    {
      provider: 'openai-responses',
      fail: () => responses.enqueue(responsesStatus(503, 'busy')),
      answer: (t: string) => responses.enqueue(responsesText(t)),
      requests: () => responses.requests,
    },
    {
      provider: 'anthropic',
      fail: () => anthropic.enqueue(anthropicStatus(529, 'overloaded_error', 'Overloaded')),
      answer: (t: string) => anthropic.enqueue(anthropicText(t)),
      requests: () => anthropic.requests,
    },
  ];

  it.each(cases)('$provider: a failure before the first event is sent again, by us', async (c) => {
    c.fail();
    c.answer('made it');
    const result = await collect(
      models({ LLM_MAX_RETRIES: '1' }).stream(ask(`${c.provider}/m`), neverAborted()),
    );
    expect(result.error).toBeUndefined();
    expect(result.text).toBe('made it');
    expect(c.requests()).toHaveLength(2);
    for (const r of c.requests()) expect(r.headers['x-stainless-retry-count']).toBe('0');
  });

  it.each(cases)('$provider: once LLM_MAX_RETRIES are spent the call fails retryable', async (c) => {
    c.fail();
    c.fail();
    c.fail();
    const result = await collect(
      models({ LLM_MAX_RETRIES: '2' }).stream(ask(`${c.provider}/m`), neverAborted()),
    );
    expect(result.error).toBeInstanceOf(ModelError);
    expect(result.error).toMatchObject({ retryable: true });
    expect(c.requests()).toHaveLength(3);
  });

  it('falls back to the next model (another provider) only after the retries of the first', async () => {
    chat.enqueue(status(500), status(500));
    anthropic.enqueue(anthropicText('from the fallback'));
    const result = await collect(
      models({ LLM_MAX_RETRIES: '1', LLM_FALLBACK_MODELS: 'anthropic/claude-x' }).stream(
        ask('openai/m'),
        neverAborted(),
      ),
    );
    expect(result.text).toBe('from the fallback');
    expect(result.finish?.model).toBe('anthropic/claude-x');
    expect(chat.requests).toHaveLength(2);
    expect(anthropic.requests).toHaveLength(1);
  });

  it('never retries a refusal (400)', async () => {
    chat.enqueue(status(400), text('not asked'));
    const result = await collect(models({ LLM_MAX_RETRIES: '2' }).stream(ask('openai/m'), neverAborted()));
    expect(result.error).toMatchObject({ code: 'UPSTREAM_BAD_REQUEST', retryable: false });
    expect(chat.requests).toHaveLength(1);
  });

  it('an abort during the wait before a retry sends nothing more', async () => {
    // No retry header: the first backoff is about half a second; the abort comes long before.
    chat.enqueue(status(503), text('not asked'));
    const abort = new AbortController();
    const stream = models({ LLM_MAX_RETRIES: '2' }).stream(ask('openai/m'), abort.signal);
    const collected = collect(stream);
    await chat.waitForRequests(1);
    abort.abort();
    const result = await collected;
    expect(result.error).toBeDefined();
    expect(chat.requests).toHaveLength(1);
  });
});

describe('RetryPolicy', () => {
  const err = (retryAfter?: number) => new ModelError('UPSTREAM_RATE_LIMITED', 'x', true, 429, retryAfter);

  it('waits what the upstream asked for, up to a minute', () => {
    const policy = new RetryPolicy(2, () => 0.5);
    expect(policy.delayMs(1, err(1234))).toBe(1234);
    expect(policy.delayMs(1, err(60_000))).toBe(60_000);
    // Asked for more than a minute: our own backoff instead (a retry is still made).
    expect(policy.delayMs(1, err(3_600_000))).toBe(500);
  });

  it('backs off exponentially with jitter, up to 8 s, when the upstream asked for nothing', () => {
    const mid = new RetryPolicy(9, () => 0.5);
    expect([1, 2, 3, 4, 5, 6].map((n) => mid.delayMs(n, err()))).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
    expect(new RetryPolicy(9, () => 0).delayMs(1, err())).toBe(375);
    expect(new RetryPolicy(9, () => 1).delayMs(1, err())).toBe(625);
  });

  it('reads retry-after-ms, retry-after in seconds, and retry-after as a date', () => {
    const headers = (h: Record<string, string>) => new Headers(h);
    expect(retryAfterMs(headers({ 'retry-after-ms': '60' }))).toBe(60);
    expect(retryAfterMs(headers({ 'retry-after': '0.05' }))).toBe(50);
    const at = retryAfterMs(headers({ 'retry-after': new Date(Date.now() + 30_000).toUTCString() }));
    expect(at).toBeGreaterThan(20_000);
    expect(at).toBeLessThanOrEqual(30_000);
    expect(retryAfterMs(headers({}))).toBeUndefined();
    expect(retryAfterMs(headers({ 'retry-after': 'soon' }))).toBeUndefined();
  });
});
