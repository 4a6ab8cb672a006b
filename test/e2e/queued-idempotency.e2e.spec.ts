import type { Client } from 'pg';
import { FakeUpstream, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { connect } from '../support/database';
import { api, eventKinds, openStream, type OpenStream } from '../support/sse-client';

/** "Messages while a run is active" with an Idempotency-Key: a retried enqueue or interrupt does it once. */
describe('Idempotency-Key on a prompt to a busy session (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  let db: Client;
  /** Lets the model's held first answer go. */
  let release: () => void = () => undefined;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, SESSION_MAX_QUEUE: '2' });
    db = await connect(app.databaseUrl);
  });
  afterEach(() => {
    release();
    upstream.reset();
  });
  afterAll(async () => {
    await db?.end();
    await app?.close();
    await upstream?.close();
  });

  /** A new session whose first run's model call waits until `release()`. */
  const busySession = async (): Promise<{ sessionId: string; runId: string; stream: OpenStream }> => {
    const held = new Promise<void>((done) => (release = done));
    let first = true;
    upstream.beforeAnswer = async () => {
      if (!first) return;
      first = false;
      await held;
    };
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'First.' } });
    await upstream.waitForRequests(1);
    return { sessionId: stream.headers.get('x-session-id')!, runId: stream.headers.get('x-run-id')!, stream };
  };
  const send = (sessionId: string, content: string, onActive: string, key: string) =>
    openStream(`${app.url}/v1/sessions/${sessionId}/messages`, {
      body: { content, onActive },
      headers: { 'idempotency-key': key },
    });
  const runsOf = async (sessionId: string) =>
    (await db.query(`SELECT id, status FROM runs WHERE session_id = $1 ORDER BY created_at`, [sessionId]))
      .rows as { id: string; status: string }[];

  it('enqueue: a retry with the same key and body answers the queued run from its start; another body is a 422', async () => {
    upstream.enqueue(text('One.'), text('Two.'), text('Three.'));
    const active = await busySession();
    const first = await send(active.sessionId, 'Second.', 'enqueue', 'enq-1');
    expect(first.status).toBe(200);
    const queuedId = first.headers.get('x-run-id')!;
    expect((await first.next())?.data).toMatchObject({ type: 'queued', position: 1 });
    first.close();

    const retry = await send(active.sessionId, 'Second.', 'enqueue', 'enq-1');
    expect(retry.status).toBe(200);
    expect(retry.headers.get('x-run-id')).toBe(queuedId);
    expect(await retry.next()).toMatchObject({
      id: 1,
      event: 'queued',
      data: { runId: queuedId, position: 1 },
    });
    expect((await runsOf(active.sessionId)).map((r) => r.id)).toEqual([active.runId, queuedId]);

    const other = await send(active.sessionId, 'Something else.', 'enqueue', 'enq-1');
    expect(other.status).toBe(422);
    expect(other.errorBody).toMatchObject({ runId: queuedId });
    expect((await runsOf(active.sessionId)).map((r) => r.id)).toEqual([active.runId, queuedId]);

    // A refused first request (the queue is full) uses no key up: once there is room, the key queues.
    const filler = await send(active.sessionId, 'Filler.', 'enqueue', 'enq-2');
    expect(filler.status).toBe(200);
    const refused = await send(active.sessionId, 'Third.', 'enqueue', 'enq-3');
    expect(refused.status).toBe(429);
    expect((await api(app.url, 'POST', `/v1/runs/${filler.headers.get('x-run-id')!}/cancel`)).status).toBe(
      202,
    );
    const third = await send(active.sessionId, 'Third.', 'enqueue', 'enq-3');
    expect(third.status).toBe(200);
    expect((await third.next())?.data).toMatchObject({ type: 'queued', position: 2 });

    release();
    await active.stream.rest();
    expect(eventKinds(await retry.rest())).toEqual(['run_started', 'text', 'step_finished', 'done']);
    expect((await third.rest()).at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    expect(upstream.requests).toHaveLength(3);
  });

  it('enqueue: requests that arrive together with one key queue one run, and all answer it', async () => {
    upstream.enqueue(text('One.'), text('Two.'));
    const active = await busySession();
    const together = await Promise.all(
      [1, 2, 3].map(() => send(active.sessionId, 'Once.', 'enqueue', 'together-1')),
    );
    expect(together.map((s) => s.status)).toEqual([200, 200, 200]);
    const ids = new Set(together.map((s) => s.headers.get('x-run-id')));
    expect(ids.size).toBe(1);
    expect((await runsOf(active.sessionId)).map((r) => r.id)).toEqual([active.runId, ...ids]);
    release();
    await active.stream.rest();
    for (const s of together)
      expect((await s.rest()).at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
  });

  it('interrupt: a retry while its run is active answers that run and cancels nothing more', async () => {
    upstream.enqueue(text('One.'), text('Changed.'));
    const active = await busySession();
    // The interrupt's run holds its model call too, so the retry finds the session busy.
    let letGo: () => void = () => undefined;
    const held = new Promise<void>((done) => (letGo = done));
    upstream.beforeAnswer = () => held;
    const first = await send(active.sessionId, 'Changed my mind.', 'interrupt', 'int-1');
    expect(first.status).toBe(200);
    const runId = first.headers.get('x-run-id')!;
    expect((await active.stream.rest()).at(-1)!.data).toMatchObject({ type: 'done', status: 'cancelled' });
    await upstream.waitForRequests(2);

    const retry = await send(active.sessionId, 'Changed my mind.', 'interrupt', 'int-1');
    expect(retry.status).toBe(200);
    expect(retry.headers.get('x-run-id')).toBe(runId);
    letGo();
    expect((await first.rest()).at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    expect((await retry.rest()).at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    expect((await runsOf(active.sessionId)).map((r) => r.status)).toEqual(['cancelled', 'completed']);
  });
});
