import { Client } from 'pg';
import { startApp, type TestApp } from '../support/app';
import { FakeUpstream, text } from '../support/fake-upstream';
import { api, openStream, type StreamEvent } from '../support/sse-client';

/**
 * Idempotency-Key on the two POSTs that start runs: a client that retries after a dropped
 * connection (as fetch-event-source does by default) gets the run its first request started —
 * never a second run, a second prompt or a second model call.
 */
describe('Idempotency-Key (e2e)', () => {
  const KEY_A = { authorization: 'Bearer key-of-a' };
  const KEY_B = { authorization: 'Bearer key-of-b' };
  let upstream: FakeUpstream;
  let app: TestApp;
  let db: Client;
  let n = 0;
  const freshKey = () => `retry-${++n}-${Date.now()}`;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, API_KEYS: 'a:key-of-a,b:key-of-b' });
    db = new Client({ connectionString: app.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await app?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  const chat = (key: string, body: unknown, headers: Record<string, string> = KEY_A) =>
    openStream(`${app.url}/v1/chat`, { body, headers: { ...headers, 'idempotency-key': key } });

  async function runsOf(owner: string): Promise<number> {
    const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM runs WHERE owner = $1', [
      owner,
    ]);
    return Number(rows[0].n);
  }

  it('answers a POST retried after a cut with the same run: one run, one user message, the whole stream', async () => {
    const words = Array.from({ length: 20 }, (_, i) => `w${i}`).join(' ');
    upstream.enqueue(text(words, { delayMs: 25 }));
    const key = freshKey();
    const body = { prompt: 'Count to twenty.', tools: [] };
    const before = await runsOf('a');

    const first = await chat(key, body);
    expect(first.status).toBe(200);
    const received: StreamEvent[] = [];
    for (let i = 0; i < 4; i++) received.push((await first.next())!);
    first.close(); // the connection drops mid-stream

    const retry = await openStream(`${app.url}/v1/chat`, {
      body,
      headers: { ...KEY_A, 'idempotency-key': key, 'last-event-id': String(received.at(-1)!.id) },
    });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('x-run-id')).toBe(first.headers.get('x-run-id'));
    expect(retry.headers.get('x-session-id')).toBe(first.headers.get('x-session-id'));
    received.push(...(await retry.rest()));

    expect(received.map((e) => e.id)).toEqual(received.map((_, i) => i + 1));
    expect(received.at(-1)!.event).toBe('done');
    expect(
      received
        .filter((e) => e.event === 'text')
        .map((e) => e.data.delta)
        .join(''),
    ).toBe(words);
    expect(await runsOf('a')).toBe(before + 1);
    expect(upstream.requests).toHaveLength(1);
    const session = await api(
      app.url,
      'GET',
      `/v1/sessions/${first.headers.get('x-session-id')}`,
      undefined,
      KEY_A,
    );
    expect(session.body.messages.filter((m: { role: string }) => m.role === 'user')).toHaveLength(1);

    // Without Last-Event-ID a retry gets the run from its start.
    const again = await chat(key, body);
    const replayed = await again.rest();
    expect(again.headers.get('x-run-id')).toBe(first.headers.get('x-run-id'));
    expect(replayed.map((e) => e.id)).toEqual(received.map((e) => e.id));
    expect(upstream.requests).toHaveLength(1);
  });

  it('starts one run for requests that arrive together with the same key', async () => {
    upstream.enqueue(text('only once', { delayMs: 20 }));
    const key = freshKey();
    const body = { prompt: 'Together.', tools: [] };
    const before = await runsOf('a');
    const streams = await Promise.all(Array.from({ length: 6 }, () => chat(key, body)));
    const runIds = new Set(streams.map((s) => s.headers.get('x-run-id')));
    expect(streams.map((s) => s.status)).toEqual(Array(6).fill(200));
    expect(runIds.size).toBe(1);
    for (const s of streams) expect((await s.rest()).at(-1)!.event).toBe('done');
    expect(await runsOf('a')).toBe(before + 1);
    expect(upstream.requests).toHaveLength(1);
  });

  it('refuses the same key with another body (422), and a key outside 1–200 characters (400)', async () => {
    upstream.enqueue(text('first'));
    const key = freshKey();
    const first = await chat(key, { prompt: 'One.', tools: [] });
    await first.rest();

    const other = await chat(key, { prompt: 'Two.', tools: [] });
    expect(other.status).toBe(422);
    expect(other.errorBody).toMatchObject({ statusCode: 422, runId: first.headers.get('x-run-id') });
    // The same body as parsed JSON (key order aside) is the same request.
    const same = await chat(key, { tools: [], prompt: 'One.' });
    expect(same.status).toBe(200);
    expect(same.headers.get('x-run-id')).toBe(first.headers.get('x-run-id'));
    await same.rest();

    expect((await chat('k'.repeat(201), { prompt: 'Long key.' })).status).toBe(400);
    expect((await chat('', { prompt: 'Empty key.' })).status).toBe(400);
    expect(upstream.requests).toHaveLength(1);
  });

  it('keeps keys apart per API key and per endpoint, and for 24 hours only', async () => {
    upstream.fallback = text('an answer');
    const key = freshKey();
    const a = await chat(key, { prompt: 'Hi.', tools: [] });
    await a.rest();
    const b = await chat(key, { prompt: 'Hi.', tools: [] }, KEY_B);
    await b.rest();
    expect(b.status).toBe(200);
    expect(b.headers.get('x-run-id')).not.toBe(a.headers.get('x-run-id'));

    const sessionId = a.headers.get('x-session-id')!;
    const message = () =>
      openStream(`${app.url}/v1/sessions/${sessionId}/messages`, {
        body: { content: 'More.' },
        headers: { ...KEY_A, 'idempotency-key': key },
      });
    const m1 = await message();
    await m1.rest();
    expect(m1.headers.get('x-run-id')).not.toBe(a.headers.get('x-run-id'));
    const m2 = await message();
    await m2.rest();
    expect(m2.headers.get('x-run-id')).toBe(m1.headers.get('x-run-id'));

    await db.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = $1`, [
      key,
    ]);
    const later = await chat(key, { prompt: 'Hi.', tools: [] });
    await later.rest();
    expect(later.status).toBe(200);
    expect(later.headers.get('x-run-id')).not.toBe(a.headers.get('x-run-id'));
  });

  /** The user messages of a recorded model request, in order. */
  const userPrompts = (i: number) =>
    upstream.requests[i].body.messages.filter((m) => m.role === 'user').map((m) => m.content);

  it('sends the new prompt to the model when a keyed start adds to an existing session (both endpoints), and stores what it saw', async () => {
    upstream.fallback = text('an answer');
    const first = await chat(freshKey(), { prompt: 'First prompt.', tools: [] });
    await first.rest();
    const sessionId = first.headers.get('x-session-id')!;

    const viaChat = await chat(freshKey(), { prompt: 'Second prompt.', sessionId });
    expect(viaChat.status).toBe(200);
    await viaChat.rest();
    const viaMessages = await openStream(`${app.url}/v1/sessions/${sessionId}/messages`, {
      body: { content: 'Third prompt.' },
      headers: { ...KEY_A, 'idempotency-key': freshKey() },
    });
    expect(viaMessages.status).toBe(200);
    await viaMessages.rest();

    expect(upstream.requests).toHaveLength(3);
    expect(userPrompts(1)).toEqual(['First prompt.', 'Second prompt.']);
    expect(userPrompts(2)).toEqual(['First prompt.', 'Second prompt.', 'Third prompt.']);
    const stored = await api(app.url, 'GET', `/v1/sessions/${sessionId}`, undefined, KEY_A);
    const conversation = (stored.body.messages as { role: string; content: string }[]).map((m) => [
      m.role,
      m.content,
    ]);
    // The store holds exactly what the model was sent, then its answer.
    const sent = upstream.requests[2].body.messages.map((m) => [m.role, m.content]);
    expect(conversation).toEqual([...sent, ['assistant', 'an answer']]);
  });

  it('answers a retry while the run is still active with that run, not 409 (both endpoints)', async () => {
    upstream.fallback = text('done');
    const opened = await chat(freshKey(), { prompt: 'Open.', tools: [] });
    await opened.rest();
    const sessionId = opened.headers.get('x-session-id')!;
    const words = Array.from({ length: 12 }, (_, i) => `w${i}`).join(' ');

    const starts = [
      (key: string, extra: Record<string, string> = {}) =>
        openStream(`${app.url}/v1/sessions/${sessionId}/messages`, {
          body: { content: 'Slowly.' },
          headers: { ...KEY_A, 'idempotency-key': key, ...extra },
        }),
      (key: string, extra: Record<string, string> = {}) =>
        openStream(`${app.url}/v1/chat`, {
          body: { prompt: 'Slowly.', sessionId },
          headers: { ...KEY_A, 'idempotency-key': key, ...extra },
        }),
    ];
    for (const start of starts) {
      upstream.enqueue(text(words, { delayMs: 40 }));
      const key = freshKey();
      const first = await start(key);
      expect(first.status).toBe(200);
      const runId = first.headers.get('x-run-id');
      const seen: StreamEvent[] = [(await first.next())!, (await first.next())!];

      const retry = await start(key);
      expect(retry.status).toBe(200);
      expect(retry.headers.get('x-run-id')).toBe(runId);
      const resumed = await start(key, { 'last-event-id': String(seen[1].id) });
      expect(resumed.status).toBe(200);
      expect(resumed.headers.get('x-run-id')).toBe(runId);

      const whole = await retry.rest();
      expect(whole[0]).toMatchObject({ id: 1, event: 'run_started' });
      expect(whole.at(-1)!.event).toBe('done');
      expect((await resumed.rest())[0].id).toBe(Number(seen[1].id) + 1);
      await first.rest();
    }
  });

  it('uses no key up when the first request is refused', async () => {
    upstream.enqueue(text('slow', { firstDelayMs: 400 }), text('second'));
    const running = await chat(freshKey(), { prompt: 'Busy.', tools: [] });
    const sessionId = running.headers.get('x-session-id')!;
    const key = freshKey();
    const send = () =>
      openStream(`${app.url}/v1/sessions/${sessionId}/messages`, {
        body: { content: 'Next.' },
        headers: { ...KEY_A, 'idempotency-key': key },
      });
    const refused = await send();
    expect(refused.status).toBe(409);
    await running.rest();

    const accepted = await send();
    expect(accepted.status).toBe(200);
    expect(accepted.headers.get('x-run-id')).not.toBe(refused.errorBody.runId);
    expect((await accepted.rest()).at(-1)!.event).toBe('done');
  });
});
