import { FakeUpstream, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { api, openStream } from '../support/sse-client';

const auth = { authorization: 'Bearer sk-payer' };

/**
 * A model priced for its prompt only (output free) still spends against a `usd` limit, and its
 * calls are reserved like any other ("Budgets and usage"): racing runs never pass the limit.
 */
describe('a usd limit on a model whose output is free (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      LLM_MODEL: 'test-model',
      API_KEYS: 'payer:sk-payer',
      // 100 USD per million prompt tokens: a call reported at 1,000 prompt tokens costs 0.1 USD.
      MODEL_PRICES: JSON.stringify({ 'openai/test-model': { input: 100, output: 0 } }),
      BUDGETS: 'payer=0.5usd/day',
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('never lets racing runs pass it', async () => {
    // Each call's prompt (the system prompt and the tools) is counted above the 1,000 tokens reported.
    upstream.fallback = text('Paid.', { usage: { promptTokens: 1000, completionTokens: 5 }, delayMs: 30 });
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const stream = await openStream(`${app.url}/v1/chat`, {
          body: { prompt: `pay ${i}` },
          headers: auth,
        });
        return stream.status === 200 ? (await stream.rest()).at(-1)!.data.status : stream.status;
      }),
    );
    expect(outcomes.every((o) => o === 'completed' || o === 'budget_exceeded' || o === 429)).toBe(true);
    const from = new Date(Date.now() - 3600_000).toISOString();
    const usage = await api(app.url, 'GET', `/v1/usage?from=${from}`, undefined, auth);
    expect(usage.body.data[0].costUsd).toBeLessThanOrEqual(0.5);
    expect(upstream.requests.length).toBeGreaterThanOrEqual(1);
    expect(upstream.requests.length).toBeLessThanOrEqual(5);
  });
});
