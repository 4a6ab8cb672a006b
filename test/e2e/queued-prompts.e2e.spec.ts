import type { Client } from 'pg';
import { FakeUpstream, chunksThen, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { connect } from '../support/database';
import { answerOf, api, eventKinds, openStream, type OpenStream } from '../support/sse-client';

const ALICE = { authorization: 'Bearer alice-secret-123' };
const BOB = { authorization: 'Bearer bob-secret-456' };

/** "Messages while a run is active": onActive reject, enqueue and interrupt on one process. */
describe('prompts to a busy session (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  let db: Client;
  /** Lets the model's held first answer go. */
  let release: () => void = () => undefined;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      API_KEYS: 'alice:alice-secret-123,bob:bob-secret-456',
      SESSION_MAX_QUEUE: '2',
    });
    db = await connect(app.databaseUrl);
  });
  afterEach(() => {
    release();
    upstream.reset();
  });
  afterAll(async () => {
    await db.end();
    await app.close();
    await upstream.close();
  });

  /** Starts a run in a new session whose model call waits until `release()`. */
  const busySession = async (): Promise<{ sessionId: string; runId: string; stream: OpenStream }> => {
    const held = new Promise<void>((done) => (release = done));
    let first = true;
    upstream.beforeAnswer = async () => {
      if (!first) return;
      first = false;
      await held;
    };
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'First.' }, headers: ALICE });
    await upstream.waitForRequests(1);
    return { sessionId: stream.headers.get('x-session-id')!, runId: stream.headers.get('x-run-id')!, stream };
  };
  const send = (sessionId: string, content: string, onActive?: string, headers = ALICE) =>
    openStream(`${app.url}/v1/sessions/${sessionId}/messages`, {
      body: { content, ...(onActive ? { onActive } : {}) },
      headers,
    });
  const runsOf = async (sessionId: string) =>
    (await db.query(`SELECT id, status FROM runs WHERE session_id = $1 ORDER BY created_at`, [sessionId]))
      .rows as { id: string; status: string }[];
  const userMessages = async (sessionId: string) =>
    (
      await db.query(`SELECT content FROM messages WHERE session_id = $1 AND role = 'user' ORDER BY seq`, [
        sessionId,
      ])
    ).rows.map((r: { content: string }) => r.content);

  it('enqueue: answered at once with queued {position}; each runs after the one before, seeing its answer', async () => {
    upstream.enqueue(text('One.'), text('Two.'), text('Three.'));
    const active = await busySession();

    const second = await send(active.sessionId, 'Second.', 'enqueue');
    expect(second.status).toBe(200);
    const secondId = second.headers.get('x-run-id')!;
    const firstOfSecond = await second.next();
    expect(firstOfSecond).toMatchObject({
      id: 1,
      event: 'queued',
      data: { runId: secondId, position: 1, seq: 1 },
    });
    const third = await send(active.sessionId, 'Third.', 'enqueue');
    expect((await third.next())?.data).toMatchObject({ type: 'queued', position: 2 });
    expect((await api(app.url, 'GET', `/v1/runs/${secondId}`, undefined, ALICE)).body).toMatchObject({
      status: 'queued',
    });
    // A queued prompt is not in the conversation yet.
    expect(await userMessages(active.sessionId)).toEqual(['First.']);

    release();
    expect(answerOf(await active.stream.rest())).toBe('One.');
    const secondLog = [firstOfSecond!, ...(await second.rest())];
    expect(eventKinds(secondLog)).toEqual(['queued', 'run_started', 'text', 'step_finished', 'done']);
    expect(secondLog.map((e) => e.id)).toEqual([1, 2, 3, 4, 5]);
    expect(secondLog.at(-1)!.data).toMatchObject({ status: 'completed' });
    const thirdLog = await third.rest();
    expect(answerOf(thirdLog)).toBe('Three.');

    // Each model call saw the runs before it, in order.
    expect(upstream.requests.map((r) => r.body.messages.slice(1))).toEqual([
      [{ role: 'user', content: 'First.' }],
      [
        { role: 'user', content: 'First.' },
        { role: 'assistant', content: 'One.' },
        { role: 'user', content: 'Second.' },
      ],
      [
        { role: 'user', content: 'First.' },
        { role: 'assistant', content: 'One.' },
        { role: 'user', content: 'Second.' },
        { role: 'assistant', content: 'Two.' },
        { role: 'user', content: 'Third.' },
      ],
    ]);
    // Its whole log, read again, is the same.
    const replay = await (
      await openStream(`${app.url}/v1/runs/${secondId}/events`, { headers: ALICE })
    ).rest();
    expect(replay).toEqual(secondLog);
  });

  it('reject is the default: 409 naming the active run; enqueue on an idle session just runs', async () => {
    upstream.enqueue(text('One.'), text('Idle.'));
    const active = await busySession();
    const refused = await send(active.sessionId, 'Again.');
    expect(refused.status).toBe(409);
    expect(refused.errorBody).toMatchObject({ runId: active.runId });
    expect((await send(active.sessionId, 'Again.', 'reject')).status).toBe(409);
    expect((await send(active.sessionId, 'Again.', 'later')).status).toBe(400);
    release();
    await active.stream.rest();

    const idle = await send(active.sessionId, 'Now.', 'enqueue');
    const log = await idle.rest();
    expect(eventKinds(log)).toEqual(['run_started', 'text', 'step_finished', 'done']);
  });

  it('cancel of a queued run ends it done cancelled with no run_started; its prompt never enters the conversation', async () => {
    upstream.enqueue(text('One.'), text('After.'));
    const active = await busySession();
    const queued = await send(active.sessionId, 'Never mind.', 'enqueue');
    const queuedId = queued.headers.get('x-run-id')!;
    const later = await send(active.sessionId, 'Later.', 'enqueue');
    expect((await later.next())?.data).toMatchObject({ type: 'queued', position: 2 });

    expect((await api(app.url, 'POST', `/v1/runs/${queuedId}/cancel`, undefined, BOB)).status).toBe(404);
    expect((await api(app.url, 'POST', `/v1/runs/${queuedId}/cancel`, undefined, ALICE)).status).toBe(202);
    const log = await queued.rest();
    expect(eventKinds(log)).toEqual(['queued', 'done']);
    expect(log[1]).toMatchObject({
      id: 2,
      data: { status: 'cancelled', iterations: 0, sessionId: active.sessionId },
    });
    expect((await api(app.url, 'GET', `/v1/runs/${queuedId}`, undefined, ALICE)).body).toMatchObject({
      status: 'cancelled',
    });

    release();
    await active.stream.rest();
    expect(answerOf(await later.rest())).toBe('After.');
    expect(await userMessages(active.sessionId)).toEqual(['First.', 'Later.']);
    expect(upstream.requests).toHaveLength(2);
  });

  it('at most SESSION_MAX_QUEUE wait per session: the next is a 429 and stores nothing', async () => {
    upstream.enqueue(text('One.'), text('Two.'), text('Three.'));
    const active = await busySession();
    const waiting = [
      await send(active.sessionId, 'Two.', 'enqueue'),
      await send(active.sessionId, 'Three.', 'enqueue'),
    ];
    const before = await runsOf(active.sessionId);
    const refused = await send(active.sessionId, 'Four.', 'enqueue');
    expect(refused.status).toBe(429);
    expect(refused.errorBody).toMatchObject({ message: expect.stringMatching(/queued prompts/) });
    expect(await runsOf(active.sessionId)).toEqual(before);

    release();
    await active.stream.rest();
    for (const w of waiting) expect((await w.rest()).at(-1)!.data).toMatchObject({ status: 'completed' });
    expect(await userMessages(active.sessionId)).toEqual(['First.', 'Two.', 'Three.']);
  });

  it('interrupt: the active run ends cancelled, the new one starts from run_started, those queued stay behind it', async () => {
    upstream.enqueue(chunksThen(['Long ', 'answer'], 'hang'), text('Changed.'), text('Queued.'));
    const active = await busySession();
    release();
    await active.stream.until('text');
    const queued = await send(active.sessionId, 'Queued.', 'enqueue');
    expect((await queued.next())?.data).toMatchObject({ type: 'queued', position: 1 });

    const changed = await send(active.sessionId, 'Changed my mind.', 'interrupt');
    expect(changed.status).toBe(200);
    const changedLog = await changed.rest();
    expect(changedLog[0]).toMatchObject({ id: 1, event: 'run_started' });
    expect(answerOf(changedLog)).toBe('Changed.');
    expect((await active.stream.rest()).at(-1)!.data).toMatchObject({ type: 'done', status: 'cancelled' });
    expect(answerOf(await queued.rest())).toBe('Queued.');

    expect((await runsOf(active.sessionId)).map((r) => r.status)).toEqual([
      'cancelled',
      'completed',
      'completed',
    ]);
    // The interrupting prompt came before the one queued earlier, after the cut answer.
    const last = upstream.requests.find((r) => r.body.messages.at(-1)?.content === 'Queued.')!;
    expect(last.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'First.' },
      { role: 'assistant', content: 'Long answer' },
      { role: 'user', content: 'Changed my mind.' },
      { role: 'assistant', content: 'Changed.' },
      { role: 'user', content: 'Queued.' },
    ]);
  });
});
