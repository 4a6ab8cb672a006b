import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { api, openStream, type StreamEvent } from '../support/sse-client';

const KEYS = { alice: 'sk-alice', bob: 'sk-bob', carol: 'sk-carol', root: 'sk-root' } as const;
const auth = (secret: string) => ({ authorization: `Bearer ${secret}` });
const ofType = (events: StreamEvent[], type: string) =>
  events.filter((e) => e.event === type).map((e) => e.data);

/** USD per million tokens of the model every run here uses (openai/test-model): exact costs. */
const PRICES = { 'openai/test-model': { input: 2, output: 10, cacheRead: 0.5 } };
const cost = (prompt: number, completion: number) => (prompt * 2 + completion * 10) / 1_000_000;
/** bob's day: what a call of 1500 prompt and 15 completion tokens costs. */
const BOB_USD = 0.00315;

describe('usage, cost and budgets (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      LLM_MODEL: 'test-model',
      MAX_ITERATIONS: '50',
      API_KEYS: Object.entries(KEYS)
        .map(([name, secret]) => `${name}:${secret}`)
        .join(','),
      ADMIN_KEYS: 'root',
      MODEL_PRICES: JSON.stringify(PRICES),
      // carol's budget is in tokens, a few calls of the race below wide; bob's is what one call below costs.
      BUDGETS: `carol=1000tokens/day,bob=${BOB_USD}usd/day`,
    });
    writeFileSync(join(app.workspace, 'README.md'), '# Demo\n');
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  async function chat(secret: string, body: Record<string, unknown>): Promise<StreamEvent[]> {
    const stream = await openStream(`${app.url}/v1/chat`, { body, headers: auth(secret) });
    expect(stream.status).toBe(200);
    return stream.rest();
  }

  const readme = (id: string) =>
    toolCalls([{ id, name: 'read_file', arguments: { path: 'README.md' } }], {
      usage: { promptTokens: 1000, completionTokens: 100 },
    });

  it('prices every model call from MODEL_PRICES: step_finished, done and the run carry costUsd', async () => {
    upstream.enqueue(readme('c1'), text('Done.', { usage: { promptTokens: 2000, completionTokens: 50 } }));
    const events = await chat(KEYS.alice, { prompt: 'Read it' });

    const steps = ofType(events, 'step_finished');
    expect(steps.map((s) => s.usage.costUsd)).toEqual([cost(1000, 100), cost(2000, 50)]);
    const done = ofType(events, 'done')[0];
    expect(done.status).toBe('completed');
    expect(done.usage).toEqual({ promptTokens: 3000, completionTokens: 150, costUsd: expect.any(Number) });
    expect(done.usage.costUsd).toBeCloseTo(cost(1000, 100) + cost(2000, 50), 12);
    const run = await api(app.url, 'GET', `/v1/runs/${events[0].data.runId}`, undefined, auth(KEYS.alice));
    expect(run.body.usage.costUsd).toBeCloseTo(cost(3000, 150), 12);
  });

  it('answers costUsd null for a model without a price, and still counts its tokens', async () => {
    upstream.enqueue(text('Hi.', { usage: { promptTokens: 10, completionTokens: 2 } }));
    const events = await chat(KEYS.alice, { prompt: 'Hi', model: 'no-such-priced-model-x' });
    expect(ofType(events, 'step_finished')[0].usage).toMatchObject({ promptTokens: 10, costUsd: null });
    expect(ofType(events, 'done')[0].usage).toEqual({ promptTokens: 10, completionTokens: 2, costUsd: null });
  });

  it("ends a run whose next call would pass the session's maxTokens as budget_exceeded, well-paired, text kept", async () => {
    upstream.fallback = readme('again');
    upstream.enqueue(
      toolCalls([{ id: 'k1', name: 'read_file', arguments: { path: 'README.md' } }], {
        text: 'Looking. ',
        usage: { promptTokens: 1000, completionTokens: 100 },
      }),
      toolCalls([{ id: 'k2', name: 'list_directory', arguments: { path: '.' } }], {
        usage: { promptTokens: 1000, completionTokens: 100 },
      }),
    );
    const events = await chat(KEYS.alice, { prompt: 'Loop', maxTokens: 3000 });

    // Each call reserves its prompt (the system prompt and the tools: ~1,400 tokens) and asks for
    // the output that fits: 1,100 tokens used after the first call leave room for a second; 2,200
    // after it leave none for a third's prompt.
    expect(upstream.requests).toHaveLength(2);
    const maxTokens = upstream.requests.map((r) => r.body.max_tokens ?? r.body.max_completion_tokens ?? 0);
    expect(maxTokens[0]).toBeLessThan(3000);
    expect(maxTokens[1]).toBeLessThan(maxTokens[0]);
    const done = ofType(events, 'done')[0];
    expect(done).toMatchObject({ status: 'budget_exceeded', iterations: 2 });
    expect(done.usage).toMatchObject({ promptTokens: 2000, completionTokens: 200 });
    const runId = events[0].data.runId as string;
    const run = await api(app.url, 'GET', `/v1/runs/${runId}`, undefined, auth(KEYS.alice));
    expect(run.body.status).toBe('budget_exceeded');
    const session = await api(app.url, 'GET', `/v1/sessions/${done.sessionId}`, undefined, auth(KEYS.alice));
    expect(session.body.maxTokens).toBe(3000);
    const messages = session.body.messages as {
      role: string;
      content: string | null;
      toolCalls?: { id: string }[];
      toolCallId?: string;
    }[];
    const asked = messages.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id));
    const answered = messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId);
    expect(answered).toEqual(asked);
    expect(messages.some((m) => m.role === 'assistant' && m.content === 'Looking. ')).toBe(true);
  });

  it("stops a run at the session's maxCostUsd the same way, and validates both limits", async () => {
    upstream.fallback = readme('again');
    // Three calls' cost: a third call's reserved prompt (~1,400 tokens) would pass it after two.
    const events = await chat(KEYS.alice, { prompt: 'Spend', maxCostUsd: cost(1000, 100) * 3 });
    expect(upstream.requests).toHaveLength(2);
    expect(ofType(events, 'done')[0]).toMatchObject({ status: 'budget_exceeded', iterations: 2 });
    expect(ofType(events, 'done')[0].usage.costUsd).toBeCloseTo(2 * cost(1000, 100), 12);

    for (const bad of [
      { maxCostUsd: 0 },
      { maxCostUsd: '1' },
      { maxTokens: 0 },
      { maxTokens: 1.5 },
      { maxTokens: '5' },
    ]) {
      const refused = await openStream(`${app.url}/v1/chat`, {
        body: { prompt: 'x', ...bad },
        headers: auth(KEYS.alice),
      });
      expect({ bad, status: refused.status }).toEqual({ bad, status: 400 });
    }
  });

  it('refuses a start with 429, Retry-After and BUDGET_EXCEEDED once the key spent its window', async () => {
    // bob's day holds exactly the first run's call.
    upstream.enqueue(text('One.', { usage: { promptTokens: 1500, completionTokens: 15 } }));
    expect(ofType(await chat(KEYS.bob, { prompt: 'One' }), 'done')[0].status).toBe('completed');

    const refused = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'Three' },
      headers: auth(KEYS.bob),
    });
    expect(refused.status).toBe(429);
    expect(refused.errorBody).toMatchObject({
      statusCode: 429,
      error: 'Too Many Requests',
      code: 'BUDGET_EXCEEDED',
    });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    expect(upstream.requests).toHaveLength(1);
    // Another key is not limited by bob's spend.
    upstream.enqueue(text('Fine.'));
    expect(ofType(await chat(KEYS.alice, { prompt: 'Me?' }), 'done')[0].status).toBe('completed');
  });

  it('never lets many racing runs of one key pass its budget: each call is reserved before it is sent', async () => {
    const runs = 12;
    const perCall = 100;
    upstream.fallback = text('Here.', { usage: { promptTokens: 90, completionTokens: 10 } });
    // Without tools the prompt is short: a call's reservation (its prompt and the output that fits) fits the day.
    const all = await Promise.all(
      Array.from({ length: runs }, (_, i) => chat(KEYS.carol, { prompt: `race ${i}`, tools: [] })),
    );

    const statuses = all.map((events) => ofType(events, 'done')[0].status);
    const calls = upstream.requests.length;
    expect(statuses.filter((s) => s === 'completed')).toHaveLength(calls);
    expect(statuses.filter((s) => s === 'budget_exceeded')).toHaveLength(runs - calls);
    const spent = all.reduce(
      (sum, events) =>
        sum +
        (ofType(events, 'done')[0].usage.promptTokens + ofType(events, 'done')[0].usage.completionTokens),
      0,
    );
    expect(spent).toBe(calls * perCall);
    expect(spent).toBeLessThanOrEqual(1000);
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(calls).toBeLessThan(runs);
    // No call asked for more output than the day had left beside its prompt.
    expect(upstream.requests.every((r) => (r.body.max_tokens ?? 0) < 1000)).toBe(true);
  });

  it('counts tokens and cost per provider and configured model in /metrics, any other model as other', async () => {
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    const value = (line: string) =>
      Number(
        metrics
          .split('\n')
          .find((l) => l.startsWith(line))
          ?.slice(line.length + 1),
      );
    expect(
      value('loopwright_model_tokens_total{provider="openai",model="openai/test-model",kind="prompt"}'),
    ).toBeGreaterThanOrEqual(3000);
    expect(
      value('loopwright_model_cost_usd_total{provider="openai",model="openai/test-model"}'),
    ).toBeGreaterThan(0);
    expect(value('loopwright_model_tokens_total{provider="openai",model="other",kind="prompt"}')).toBe(10);
    expect(metrics).not.toContain('no-such-priced-model-x');
  });

  describe('GET /v1/usage', () => {
    const usage = (secret: string, query: string) =>
      api(app.url, 'GET', `/v1/usage?${query}`, undefined, auth(secret));
    const from = new Date(Date.now() - 3600_000).toISOString();

    it("answers the caller's own use by day, model and session, and every key's only to an admin", async () => {
      const mine = await usage(KEYS.alice, `from=${from}&groupBy=model`);
      expect(mine.status).toBe(200);
      const priced = mine.body.data.find((r: { model: string }) => r.model === 'openai/test-model');
      // alice: the priced run (3000/150), the maxTokens and maxCostUsd runs (2000/200 each), the run after bob's refusal.
      expect(priced).toMatchObject({ runs: 4, cacheReadTokens: 0 });
      expect(priced.promptTokens).toBe(3000 + 2000 + 2000 + 10);
      expect(
        mine.body.data.find((r: { model: string }) => r.model === 'openai/no-such-priced-model-x'),
      ).toEqual({
        model: 'openai/no-such-priced-model-x',
        runs: 1,
        promptTokens: 10,
        completionTokens: 2,
        cacheReadTokens: 0,
        costUsd: null,
      });

      const byDay = await usage(KEYS.alice, `from=${from}&groupBy=day`);
      expect(byDay.body.data).toHaveLength(1);
      expect(byDay.body.data[0].day).toBe(new Date().toISOString().slice(0, 10));
      expect(byDay.body.data[0].runs).toBe(5);

      const bySession = await usage(KEYS.bob, `from=${from}&groupBy=session`);
      expect(bySession.body.data).toHaveLength(1);
      expect(bySession.body.data[0]).toEqual(
        expect.objectContaining({ sessionId: expect.any(String), runs: 1 }),
      );
      expect(bySession.body.data[0].costUsd).toBeCloseTo(cost(1500, 15), 12);
      // bob's limit, with what its day used and has left.
      expect(bySession.body.limits).toEqual([
        { limit: 'bob: 0.00315 usd per day (BUDGETS)', window: 'day', used: BOB_USD, left: 0 },
      ]);

      expect((await usage(KEYS.alice, 'groupBy=key')).status).toBe(400);
      const byKey = await usage(KEYS.root, `from=${from}&groupBy=key`);
      expect(byKey.status).toBe(200);
      expect(byKey.body.data.map((r: { key: string }) => r.key)).toEqual(['alice', 'bob', 'carol']);
      expect((await usage(KEYS.root, 'groupBy=day')).body.data[0].runs).toBeGreaterThan(5);
    });

    it('refuses a bad time or grouping with 400, and an empty range answers no rows', async () => {
      expect((await usage(KEYS.alice, 'from=yesterday')).status).toBe(400);
      expect((await usage(KEYS.alice, 'groupBy=week')).status).toBe(400);
      expect((await usage(KEYS.alice, `from=${new Date().toISOString()}&to=${from}`)).status).toBe(400);
      const empty = await usage(KEYS.alice, 'from=2001-01-01T00:00:00Z&to=2001-01-02T00:00:00Z');
      expect(empty.body).toEqual({ data: [], limits: [] });
    });
  });
});
