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
      // carol's budget is in tokens; 1000 fit ten calls of the race below.
      BUDGETS: `carol=1000tokens/day,bob=${cost(1000, 100) * 1.5}usd/day`,
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
    const events = await chat(KEYS.alice, { prompt: 'Loop', maxTokens: 1500 });

    // 1100 tokens after the first call leave room for a second; 2200 after it leave none.
    expect(upstream.requests).toHaveLength(2);
    const done = ofType(events, 'done')[0];
    expect(done).toMatchObject({ status: 'budget_exceeded', iterations: 2 });
    expect(done.usage).toMatchObject({ promptTokens: 2000, completionTokens: 200 });
    const runId = events[0].data.runId as string;
    const run = await api(app.url, 'GET', `/v1/runs/${runId}`, undefined, auth(KEYS.alice));
    expect(run.body.status).toBe('budget_exceeded');
    const session = await api(app.url, 'GET', `/v1/sessions/${done.sessionId}`, undefined, auth(KEYS.alice));
    expect(session.body.maxTokens).toBe(1500);
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
    const events = await chat(KEYS.alice, { prompt: 'Spend', maxCostUsd: cost(1000, 100) * 1.5 });
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
    // bob's day holds one and a half calls: the first run spends one, the second passes the limit.
    upstream.enqueue(text('One.', { usage: { promptTokens: 1000, completionTokens: 100 } }));
    await chat(KEYS.bob, { prompt: 'One' });
    upstream.enqueue(text('Two.', { usage: { promptTokens: 1000, completionTokens: 100 } }));
    expect(ofType(await chat(KEYS.bob, { prompt: 'Two' }), 'done')[0].status).toBe('completed');

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
    expect(upstream.requests).toHaveLength(2);
    // Another key is not limited by bob's spend.
    upstream.enqueue(text('Fine.'));
    expect(ofType(await chat(KEYS.alice, { prompt: 'Me?' }), 'done')[0].status).toBe('completed');
  });

  it('lets many racing runs of one key pass its budget by at most the calls in flight, none started after', async () => {
    const runs = 12;
    const perCall = 100;
    upstream.fallback = toolCalls([{ name: 'read_file', arguments: { path: 'README.md' } }], {
      usage: { promptTokens: 90, completionTokens: 10 },
    });
    const all = await Promise.all(
      Array.from({ length: runs }, (_, i) => chat(KEYS.carol, { prompt: `race ${i}` })),
    );

    const finals = all.map((events) => events[events.length - 1]);
    expect(finals.every((e) => e.event === 'done' && e.data.status === 'budget_exceeded')).toBe(true);
    const calls = upstream.requests.length;
    const spent = all.reduce(
      (sum, events) =>
        sum +
        (ofType(events, 'done')[0].usage.promptTokens + ofType(events, 'done')[0].usage.completionTokens),
      0,
    );
    expect(spent).toBe(calls * perCall);
    // Ten calls reach the limit; each other run can have had at most one call in flight then.
    expect(calls).toBeGreaterThanOrEqual(10);
    expect(calls).toBeLessThanOrEqual(10 + runs - 1);
    expect(spent).toBeLessThanOrEqual(1000 + (runs - 1) * perCall);
    // Spent: the next start is refused at once.
    const refused = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'more' },
      headers: auth(KEYS.carol),
    });
    expect(refused.status).toBe(429);
    expect(upstream.requests.length).toBe(calls);
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
      expect(bySession.body.data).toHaveLength(2);
      expect(bySession.body.data[0]).toEqual(
        expect.objectContaining({ sessionId: expect.any(String), runs: 1 }),
      );
      expect(bySession.body.data.reduce((s: number, r: { costUsd: number }) => s + r.costUsd, 0)).toBeCloseTo(
        2 * cost(1000, 100),
        12,
      );

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
      expect(empty.body).toEqual({ data: [] });
    });
  });
});
