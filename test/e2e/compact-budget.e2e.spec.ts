import { FakeUpstream, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { proseOf } from '../support/long-session';
import { api, openStream, type StreamEvent } from '../support/sse-client';

const KEYS = { tight: 'sk-tight', roomy: 'sk-roomy' } as const;
const auth = (secret: string) => ({ authorization: `Bearer ${secret}` });
/** tight's day: room for a few short calls, not for a summary (its prompt and its 200 tokens at least). */
const TIGHT = 300;

/**
 * An on-demand summary (`POST /v1/sessions/:id/compact`) is a model call of the key's like any: it
 * is reserved on the key's limits before it is sent, and one that does not fit is not sent — the
 * 429 a start gets — so the stored spend never passes the limit.
 */
describe('the on-demand summary under a budget (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      LLM_MODEL: 'test-model',
      LLM_MAX_OUTPUT_TOKENS: '40',
      API_KEYS: Object.entries(KEYS)
        .map(([name, secret]) => `${name}:${secret}`)
        .join(','),
      BUDGETS: `tight=${TIGHT}tokens/day,roomy=100000tokens/day`,
    });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.reset();
    // No usage reported: each call is counted as its reservation counted it.
    upstream.fallback = text('Fine.', { usage: { promptTokens: 0, completionTokens: 0 } });
  });

  /** A session of `secret` with two short exchanges: something older than the newest prompt to summarize. */
  async function sessionOf(secret: string): Promise<string> {
    const created = await api(app.url, 'POST', '/v1/sessions', { tools: [] }, auth(secret));
    expect(created.status).toBe(201);
    for (const content of ['Hello there', 'And again']) {
      const stream = await openStream(`${app.url}/v1/sessions/${created.body.id}/messages`, {
        body: { content },
        headers: auth(secret),
      });
      expect(stream.status).toBe(200);
      expect((await stream.rest(30_000)).at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    }
    return created.body.id;
  }

  async function tokensLimit(secret: string): Promise<{ used: number; left: number }> {
    const usage = await api(app.url, 'GET', '/v1/usage', undefined, auth(secret));
    expect(usage.status).toBe(200);
    return usage.body.limits[0];
  }

  it('reserves an on-demand summary: one that does not fit is a 429 BUDGET_EXCEEDED before any model request', async () => {
    const sessionId = await sessionOf(KEYS.tight);
    const before = await tokensLimit(KEYS.tight);
    // Room left for a short call (a start would be let through), not for a summary.
    expect(before.left).toBeGreaterThan(50);
    const requests = upstream.requests.length;

    const refused = await api(
      app.url,
      'POST',
      `/v1/sessions/${sessionId}/compact`,
      undefined,
      auth(KEYS.tight),
    );
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'BUDGET_EXCEEDED' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Not sent; nothing spent, nothing left reserved.
    expect(upstream.requests.length).toBe(requests);
    expect(await tokensLimit(KEYS.tight)).toEqual(before);
    expect(before.used).toBeLessThanOrEqual(TIGHT);
    const session = await api(app.url, 'GET', `/v1/sessions/${sessionId}`, undefined, auth(KEYS.tight));
    expect(session.body.messages.some((m: { kind?: string }) => m.kind === 'summary')).toBe(false);

    // The same summary for a key with room: reserved, sent, stored, and its reservation given back.
    const roomySession = await sessionOf(KEYS.roomy);
    const roomyBefore = await tokensLimit(KEYS.roomy);
    upstream.fallback = text('The user said hello twice.', {
      usage: { promptTokens: 0, completionTokens: 0 },
    });

    const compacted = await api(
      app.url,
      'POST',
      `/v1/sessions/${roomySession}/compact`,
      undefined,
      auth(KEYS.roomy),
    );
    expect(compacted.status).toBe(200);
    expect(compacted.body).toMatchObject({ role: 'system', kind: 'summary' });
    // What it reserved was given back: what is left is the limit less what is used, calls included.
    const after = await tokensLimit(KEYS.roomy);
    expect(after.used).toBeGreaterThan(roomyBefore.used);
    expect(after.left).toBe(100000 - after.used);
  });

  it("reserves a run's automatic summary: one that does not fit is not sent, and the run ends budget_exceeded", async () => {
    // A small window (target 1,600 tokens: a summary of 200 tokens at least), a session near it
    // built by a process with a budget far from it (its counter counts the calls).
    const env = {
      OPENAI_BASE_URL: upstream.baseUrl,
      LLM_MODEL: 'test-model',
      LLM_MAX_OUTPUT_TOKENS: '40',
      LLM_CONTEXT_TOKENS: '2000',
      API_KEYS: Object.entries(KEYS)
        .map(([name, secret]) => `${name}:${secret}`)
        .join(','),
    };
    const free = await startApp({ ...env, BUDGETS: 'roomy=1000000tokens/day' });
    let tight: TestApp | undefined;
    try {
      const created = await api(free.url, 'POST', '/v1/sessions', { tools: [] }, auth(KEYS.roomy));
      const say = async (url: string, content: string): Promise<StreamEvent[]> => {
        const stream = await openStream(`${url}/v1/sessions/${created.body.id}/messages`, {
          body: { content },
          headers: auth(KEYS.roomy),
        });
        expect(stream.status).toBe(200);
        return stream.rest(30_000);
      };
      for (let k = 0; k < 3; k++) await say(free.url, proseOf(1800, k));
      const { used } = (await api(free.url, 'GET', '/v1/usage', undefined, auth(KEYS.roomy))).body.limits[0];
      // The same database with a budget of what was used and 120 tokens: room to start, none for a summary.
      const limit = used + 120;
      tight = await startApp({ ...env, BUDGETS: `roomy=${limit}tokens/day` }, free.databaseUrl);
      upstream.reset();
      upstream.fallback = (request) =>
        text(request.body.tools?.length ? 'Fine.' : 'A summary.', {
          usage: { promptTokens: 1000, completionTokens: 50 },
        });

      const events = await say(tight.url, proseOf(1800, 7));
      expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'budget_exceeded' });
      // Neither the summary nor the call it would have made room for was sent.
      expect(upstream.requests).toHaveLength(0);
      expect(events.some((e) => e.event === 'context_compacted')).toBe(false);
      const after = (await api(tight.url, 'GET', '/v1/usage', undefined, auth(KEYS.roomy))).body.limits[0];
      expect(after.used).toBeLessThanOrEqual(limit);
      expect(after.left).toBe(limit - after.used);
    } finally {
      await tight?.close();
      await free.close();
    }
  });
});
