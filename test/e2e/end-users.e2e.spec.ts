import { FakeUpstream, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { api, openStream, type StreamEvent } from '../support/sse-client';

const SECRET = 'sk-app';
const forUser = (endUser?: string) => ({
  authorization: `Bearer ${SECRET}`,
  ...(endUser === undefined ? {} : { 'x-end-user': endUser }),
});
const ofType = (events: StreamEvent[], type: string) =>
  events.filter((e) => e.event === type).map((e) => e.data);

/**
 * End users ("Budgets and usage"): an application holding one key names the person a request is
 * for with X-End-User; such a request sees and changes only that person's sessions, runs, usage
 * and Idempotency-Keys — anything else is a 404 —, while the key without the header sees all.
 */
describe('end users of one key (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  let annSession: string;
  let annRun: string;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      LLM_MODEL: 'test-model',
      API_KEYS: `app:${SECRET}`,
      MODEL_PRICES: JSON.stringify({ 'openai/test-model': { input: 1, output: 1 } }),
      BUDGETS: 'app/*=1usd/day',
      CORS_ORIGINS: 'https://app.example',
    });
    upstream.fallback = text('Hello.', { usage: { promptTokens: 100, completionTokens: 2 } });
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'Hi, I am Ann.' },
      headers: forUser('ann'),
    });
    expect(stream.status).toBe(200);
    const events = await stream.rest();
    annRun = events[0].data.runId as string;
    annSession = ofType(events, 'done')[0].sessionId as string;
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('gives a session started with X-End-User to that end user, and shows it only to them and to the key', async () => {
    const own = await api(app.url, 'GET', `/v1/sessions/${annSession}`, undefined, forUser('ann'));
    expect(own.status).toBe(200);
    expect(own.body.endUser).toBe('ann');
    expect((await api(app.url, 'GET', `/v1/sessions/${annSession}`, undefined, forUser())).status).toBe(200);

    // Another end user of the same key: as if none of it existed.
    for (const [method, path, body] of [
      ['GET', `/v1/sessions/${annSession}`],
      ['PATCH', `/v1/sessions/${annSession}`, { title: 'mine now' }],
      ['DELETE', `/v1/sessions/${annSession}`],
      ['POST', `/v1/sessions/${annSession}/compact`],
      ['POST', `/v1/sessions/${annSession}/fork`, {}],
      ['GET', `/v1/sessions/${annSession}/commands`],
      ['POST', `/v1/runs/${annRun}/replay`, {}],
      ['GET', `/v1/runs/${annRun}`],
      ['GET', `/v1/runs/${annRun}/events`],
      ['POST', `/v1/runs/${annRun}/cancel`],
      ['POST', `/v1/runs/${annRun}/stream-token`],
    ] as const) {
      const res = await api(app.url, method, path, body, forUser('ben'));
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
    }
    const prompt = await openStream(`${app.url}/v1/sessions/${annSession}/messages`, {
      body: { content: 'What did Ann say?' },
      headers: forUser('ben'),
    });
    expect(prompt.status).toBe(404);
    const viaChat = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'What did Ann say?', sessionId: annSession },
      headers: forUser('ben'),
    });
    expect(viaChat.status).toBe(404);
    // Still Ann's, untouched.
    expect(
      (await api(app.url, 'GET', `/v1/sessions/${annSession}`, undefined, forUser('ann'))).body.title,
    ).not.toBe('mine now');
  });

  it("lists only the end user's sessions, and the key's all of them (or one end user's with ?endUser=)", async () => {
    const benSession = await api(app.url, 'POST', '/v1/sessions', { title: 'Ben' }, forUser('ben'));
    expect(benSession.status).toBe(201);
    expect(benSession.body.endUser).toBe('ben');
    const ids = async (endUser: string | undefined, query = '') =>
      (await api(app.url, 'GET', `/v1/sessions${query}`, undefined, forUser(endUser))).body.data.map(
        (s: { id: string }) => s.id,
      );
    expect(await ids('ben')).toEqual([benSession.body.id]);
    expect(await ids('ann')).toEqual([annSession]);
    expect(await ids(undefined)).toEqual([benSession.body.id, annSession]);
    expect(await ids(undefined, '?endUser=ann')).toEqual([annSession]);
    // With the header, naming another end user answers nothing.
    expect(await ids('ben', '?endUser=ann')).toEqual([]);
  });

  it("answers each end user's usage and limits only, and the key's by end user", async () => {
    const from = new Date(Date.now() - 3600_000).toISOString();
    const ben = await api(
      app.url,
      'GET',
      `/v1/usage?from=${from}&groupBy=endUser`,
      undefined,
      forUser('ben'),
    );
    expect(ben.body.data).toEqual([]);
    expect(ben.body.limits).toEqual([
      { limit: 'app/ben: 1 usd per day (BUDGETS)', window: 'day', used: 0, left: 1 },
    ]);
    const ann = await api(
      app.url,
      'GET',
      `/v1/usage?from=${from}&groupBy=endUser`,
      undefined,
      forUser('ann'),
    );
    expect(ann.body.data).toEqual([expect.objectContaining({ endUser: 'ann', runs: 1, promptTokens: 100 })]);
    expect(ann.body.limits[0]).toMatchObject({ limit: 'app/ann: 1 usd per day (BUDGETS)', used: 102 / 1e6 });
    const key = await api(
      app.url,
      'GET',
      `/v1/usage?from=${from}&groupBy=endUser&endUser=ann`,
      undefined,
      forUser(),
    );
    expect(key.body.data).toEqual([expect.objectContaining({ endUser: 'ann', runs: 1 })]);
    const peek = await api(app.url, 'GET', `/v1/usage?from=${from}&endUser=ann`, undefined, forUser('ben'));
    expect(peek.body.data).toEqual([]);
  });

  it("keeps an Idempotency-Key to its end user: another end user's same key starts their own run", async () => {
    const send = (endUser: string) =>
      openStream(`${app.url}/v1/chat`, {
        body: { prompt: 'Once only' },
        headers: { ...forUser(endUser), 'idempotency-key': 'shared-key-1' },
      });
    const first = await send('ann');
    const firstRun = (await first.rest())[0].data.runId;
    const other = await send('ben');
    expect(other.status).toBe(200);
    const otherEvents = await other.rest();
    expect(otherEvents[0].data.runId).not.toBe(firstRun);
    const run = await api(app.url, 'GET', `/v1/runs/${otherEvents[0].data.runId}`, undefined, forUser('ben'));
    expect(run.status).toBe(200);
  });

  it('refuses an endUser that disagrees with X-End-User, or is not 1–200 printable ASCII characters, with 400', async () => {
    const create = (body: object, endUser?: string) =>
      api(app.url, 'POST', '/v1/sessions', body, forUser(endUser));
    expect((await create({ endUser: 'ann' }, 'ben')).status).toBe(400);
    expect((await create({ endUser: '' })).status).toBe(400);
    expect((await create({ endUser: 'x'.repeat(201) })).status).toBe(400);
    expect((await create({ endUser: 'tab\there' })).status).toBe(400);
    expect((await create({ endUser: 'ann' }, 'ann')).status).toBe(201);
    const named = await create({ endUser: 'cy' });
    expect(named.body.endUser).toBe('cy');
    expect(
      (await api(app.url, 'GET', '/v1/sessions', undefined, { ...forUser(), 'x-end-user': '' })).status,
    ).toBe(400);
  });

  it('lets browsers of an allowed origin send X-End-User', async () => {
    const res = await fetch(`${app.url}/v1/sessions`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'x-end-user',
      },
    });
    expect(res.headers.get('access-control-allow-headers') ?? '').toMatch(/X-End-User/i);
  });
});
