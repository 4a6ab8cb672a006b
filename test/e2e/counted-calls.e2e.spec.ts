import { chunksThen, endless, FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { api, openStream, type StreamEvent } from '../support/sse-client';

/**
 * Every model call counts ("Budgets and usage"): one the provider never reported — an answer cut by
 * ANSWER_MAX_BYTES, a cancelled call, one that failed after it streamed — is estimated from what was
 * sent and streamed, marked `estimated`, and counted in step_finished/done, GET /v1/runs/:id,
 * GET /v1/usage and the key's budget. Each test has a key of its own, so its usage is its own.
 */
const KEYS = ['cut', 'six', 'cancel', 'fail', 'money', 'summary'] as const;
type Key = (typeof KEYS)[number];
const auth = (key: Key) => ({ authorization: `Bearer sk-${key}` });
const ofType = (events: StreamEvent[], type: string) =>
  events.filter((e) => e.event === type).map((e) => e.data);

describe('every model call counted (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      LLM_MODEL: 'test-model',
      ANSWER_MAX_BYTES: '4096',
      API_KEYS: KEYS.map((k) => `${k}:sk-${k}`).join(','),
      // 100 USD per million prompt tokens: 1,000 tokens are 0.1 USD, 50 are 0.005.
      MODEL_PRICES: JSON.stringify({ 'openai/test-model': { input: 100, output: 0 } }),
      BUDGETS: 'six=3000tokens/day',
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  async function chat(key: Key, prompt: string): Promise<StreamEvent[]> {
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt }, headers: auth(key) });
    expect(stream.status).toBe(200);
    return stream.rest();
  }

  /** GET /v1/usage of `key` over the last hour, one row. */
  async function usageOf(key: Key) {
    const from = new Date(Date.now() - 3600_000).toISOString();
    const res = await api(app.url, 'GET', `/v1/usage?from=${from}&groupBy=model`, undefined, auth(key));
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    return res.body.data[0] as {
      runs: number;
      promptTokens: number;
      completionTokens: number;
      costUsd: number;
    };
  }

  async function runOf(key: Key, events: StreamEvent[]) {
    const run = await api(app.url, 'GET', `/v1/runs/${events[0].data.runId}`, undefined, auth(key));
    expect(run.status).toBe(200);
    return run.body as { status: string; usage: Record<string, unknown> };
  }

  it('counts an answer cut by ANSWER_MAX_BYTES, estimated, in step_finished, done, the run and GET /v1/usage', async () => {
    upstream.enqueue(endless('abc€'));
    const events = await chat('cut', 'Never stop.');

    const [step] = ofType(events, 'step_finished');
    expect(step.finishReason).toBe('length');
    expect(step.usage).toMatchObject({ estimated: true });
    expect(step.usage.promptTokens).toBeGreaterThan(0);
    // 4,096 bytes of text streamed: far more than a handful of tokens.
    expect(step.usage.completionTokens).toBeGreaterThan(500);
    const [done] = ofType(events, 'done');
    expect(done.usage).toEqual(step.usage);
    const run = await runOf('cut', events);
    expect(run.usage).toEqual(step.usage);
    expect(await usageOf('cut')).toMatchObject({
      runs: 1,
      promptTokens: step.usage.promptTokens,
      completionTokens: step.usage.completionTokens,
      costUsd: step.usage.costUsd,
    });
  });

  it('keeps six cut runs under a 3,000-token budget: the ones that do not fit make no call', async () => {
    upstream.fallback = endless('abc€');
    const outcomes: (number | string)[] = [];
    for (let i = 0; i < 6; i++) {
      const stream = await openStream(`${app.url}/v1/chat`, {
        body: { prompt: `Go ${i}` },
        headers: auth('six'),
      });
      outcomes.push(stream.status === 200 ? ofType(await stream.rest(), 'done')[0].status : stream.status);
    }
    // The first call takes (and reserves) most of the day; the others find no room for their prompt.
    expect(outcomes[0]).toBe('completed');
    expect(outcomes.slice(1).every((o) => o === 'budget_exceeded' || o === 429)).toBe(true);
    expect(upstream.requests.length).toBeLessThan(6);
    const used = await usageOf('six');
    expect(used.promptTokens + used.completionTokens).toBeGreaterThan(0);
    expect(used.promptTokens + used.completionTokens).toBeLessThanOrEqual(3000);
  });

  it("counts a call cancelled mid-stream in the cancelled run's done.usage, the run and GET /v1/usage", async () => {
    upstream.enqueue(chunksThen(['A first part of the answer, ', 'and a second one.'], 'hang'));
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'Talk' },
      headers: auth('cancel'),
    });
    const head = await stream.until((e) => e.event === 'text' && e.data.delta.includes('second'));
    const cancelled = await api(
      app.url,
      'POST',
      `/v1/runs/${head[0].data.runId}/cancel`,
      undefined,
      auth('cancel'),
    );
    expect(cancelled.status).toBe(202);
    const events = [...head, ...(await stream.rest())];

    const [done] = ofType(events, 'done');
    expect(done.status).toBe('cancelled');
    expect(done.usage).toMatchObject({ estimated: true });
    expect(done.usage.promptTokens).toBeGreaterThan(0);
    expect(done.usage.completionTokens).toBeGreaterThan(0);
    expect((await runOf('cancel', events)).usage).toEqual(done.usage);
    expect(await usageOf('cancel')).toMatchObject({
      runs: 1,
      promptTokens: done.usage.promptTokens,
      completionTokens: done.usage.completionTokens,
    });
  });

  it('counts a call that failed after it streamed in the run and GET /v1/usage', async () => {
    upstream.enqueue(chunksThen(['Some of the answer before the upstream broke.'], 'reset'));
    const events = await chat('fail', 'Talk');
    expect(ofType(events, 'error')).toHaveLength(1);

    const run = await runOf('fail', events);
    expect(run.status).toBe('failed');
    expect(run.usage).toMatchObject({ estimated: true });
    expect(run.usage.promptTokens).toBeGreaterThan(0);
    expect(run.usage.completionTokens).toBeGreaterThan(0);
    expect(await usageOf('fail')).toMatchObject({
      runs: 1,
      promptTokens: run.usage.promptTokens,
      completionTokens: run.usage.completionTokens,
    });
  });

  it('keeps money exact: 0.1 + 0.005 USD is 0.105 in done, the run and GET /v1/usage', async () => {
    upstream.enqueue(
      toolCalls([{ id: 'c1', name: 'list_directory', arguments: { path: '.' } }], {
        usage: { promptTokens: 1000, completionTokens: 1 },
      }),
      text('Done.', { usage: { promptTokens: 50, completionTokens: 1 } }),
    );
    const events = await chat('money', 'List');
    expect(ofType(events, 'step_finished').map((s) => s.usage.costUsd)).toEqual([0.1, 0.005]);
    const [done] = ofType(events, 'done');
    expect(done.usage.costUsd).toBe(0.105);
    expect((await runOf('money', events)).usage.costUsd).toBe(0.105);
    expect((await usageOf('money')).costUsd).toBe(0.105);
  });

  it('counts an on-demand summary cut by ANSWER_MAX_BYTES, estimated, in GET /v1/usage', async () => {
    const created = await api(app.url, 'POST', '/v1/sessions', {}, auth('summary'));
    const sessionId: string = created.body.id;
    for (const content of ['First question', 'Second question']) {
      upstream.enqueue(text('An answer.', { usage: { promptTokens: 10, completionTokens: 2 } }));
      const stream = await openStream(`${app.url}/v1/sessions/${sessionId}/messages`, {
        body: { content },
        headers: auth('summary'),
      });
      await stream.rest();
    }
    upstream.enqueue(endless('abc€'));
    const compacted = await api(
      app.url,
      'POST',
      `/v1/sessions/${sessionId}/compact`,
      undefined,
      auth('summary'),
    );
    expect(compacted.status).toBe(200);

    const used = await usageOf('summary');
    // The two runs' 20 + 4, and the summary's prompt (the transcript) and its 4,096 bytes of text.
    expect(used.promptTokens).toBeGreaterThan(20 + 10);
    expect(used.completionTokens).toBeGreaterThan(4 + 500);
  });
});
