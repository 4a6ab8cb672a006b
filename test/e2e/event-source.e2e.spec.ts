import { EventSource } from 'eventsource';
import { Client } from 'pg';
import { startApp, type TestApp } from '../support/app';
import { FakeUpstream, text } from '../support/fake-upstream';
import { api, openStream } from '../support/sse-client';

/**
 * A real EventSource client (the `eventsource` package, as a browser's behaves) on a run's events:
 * every event once, then, when the run has ended and the client has its last event, the server's
 * 204 makes it stop instead of reconnecting for ever.
 */
describe('EventSource on GET /v1/runs/:id/events (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('gets every event once, reconnects with Last-Event-ID, and stops on the 204', async () => {
    upstream.enqueue(text('one two three four'));
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Count.', tools: [] } });
    const runId = stream.headers.get('x-run-id')!;
    const all = await stream.rest();

    let requests = 0;
    const seen: number[] = [];
    const source = new EventSource(`${app.url}/v1/runs/${runId}/events`, {
      fetch: (input, init) => {
        requests++;
        return fetch(input, init);
      },
    });
    const closed = new Promise<void>((done) => {
      // The contract's `error` event and EventSource's own share a name: ours carries data.
      source.addEventListener('error', () => {
        if (source.readyState === EventSource.CLOSED) done();
      });
    });
    for (const type of ['run_started', 'text', 'step_finished', 'done']) {
      source.addEventListener(type, (e) => seen.push(Number(e.lastEventId)));
    }
    await closed;
    source.close();

    expect(seen).toEqual(all.map((e) => Number(e.id)));
    // The first request streamed everything; the reconnect after the end got the 204 and was the last.
    expect(requests).toBe(2);
  });
});

/**
 * A browser's EventSource sends no Authorization header: with API_KEYS set it reads a run's events
 * with a stream token in the query string, scoped to that run and to that route.
 */
describe('stream tokens (e2e)', () => {
  const KEY_A = { authorization: 'Bearer key-of-a' };
  const KEY_B = { authorization: 'Bearer key-of-b' };
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, API_KEYS: 'a:key-of-a,b:key-of-b' });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  async function finishedRun(): Promise<string> {
    upstream.enqueue(text('short answer'));
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'Hi.', tools: [] },
      headers: KEY_A,
    });
    await stream.rest();
    return stream.headers.get('x-run-id')!;
  }

  async function tokenFor(runId: string): Promise<{ token: string; expiresAt: string | null }> {
    const res = await api(app.url, 'POST', `/v1/runs/${runId}/stream-token`, undefined, KEY_A);
    expect(res.status).toBe(201);
    return res.body;
  }

  it('lets EventSource read a live run through a cut, with no event lost or repeated, then stop on the 204', async () => {
    const words = Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ');
    upstream.enqueue(text(words, { delayMs: 30 }));
    const started = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'Go.', tools: [] },
      headers: KEY_A,
    });
    const runId = started.headers.get('x-run-id')!;
    const issued = await tokenFor(runId);
    expect(issued.expiresAt).toBeNull();

    const statuses: number[] = [];
    const resumedFrom: string[] = [];
    const source = new EventSource(`${app.url}/v1/runs/${runId}/events?token=${issued.token}`, {
      fetch: async (input, init) => {
        const headers = new Headers(init?.headers);
        resumedFrom.push(headers.get('last-event-id') ?? '');
        expect(headers.get('authorization')).toBeNull();
        const res = await fetch(input, init);
        statuses.push(res.status);
        // The first connection is cut (as by a proxy) after its first few network reads.
        return statuses.length === 1 ? cutAfter(res, 3) : res;
      },
    });
    const seen: number[] = [];
    for (const type of ['run_started', 'text', 'step_finished', 'done']) {
      source.addEventListener(type, (e) => seen.push(Number(e.lastEventId)));
    }
    await new Promise<void>((done) => {
      source.addEventListener('error', () => {
        if (source.readyState === EventSource.CLOSED) done();
      });
    });
    source.close();
    const all = await started.rest();

    expect(seen).toEqual(all.map((e) => e.id));
    expect(new Set(seen).size).toBe(seen.length);
    expect(Number(resumedFrom[1])).toBeGreaterThan(0);
    expect(statuses.at(-1)).toBe(204);
    expect(statuses.slice(0, -1).every((s) => s === 200)).toBe(true);
  }, 20_000);

  it('opens nothing but that run’s events, and the Authorization header decides when both are sent', async () => {
    const runId = await finishedRun();
    const otherRunId = await finishedRun();
    const { token, expiresAt } = await tokenFor(runId);
    expect(token).not.toContain('key-of-a');

    expect((await api(app.url, 'GET', `/v1/runs/${runId}/events?token=${token}`)).status).toBe(200);
    // Another run, another route, a route that writes: 401.
    expect((await api(app.url, 'GET', `/v1/runs/${otherRunId}/events?token=${token}`)).status).toBe(401);
    expect((await api(app.url, 'GET', `/v1/runs/${runId}?token=${token}`)).status).toBe(401);
    expect((await api(app.url, 'POST', `/v1/runs/${runId}/cancel?token=${token}`)).status).toBe(401);
    expect((await api(app.url, 'POST', `/v1/runs/${runId}/stream-token?token=${token}`)).status).toBe(401);
    // Key b neither gets a token for a's run nor reads it, with or without a's token beside its key.
    expect((await api(app.url, 'POST', `/v1/runs/${runId}/stream-token`, undefined, KEY_B)).status).toBe(404);
    expect(
      (await api(app.url, 'GET', `/v1/runs/${runId}/events?token=${token}`, undefined, KEY_B)).status,
    ).toBe(404);
    expect((await api(app.url, 'GET', `/v1/runs/${runId}/events?token=lwst_forged`)).status).toBe(401);

    const run = await api(app.url, 'GET', `/v1/runs/${runId}`, undefined, KEY_A);
    expect(Date.parse(expiresAt!)).toBe(Date.parse(run.body.finishedAt) + 10 * 60_000);
  });

  it('expires 10 minutes after the run ended', async () => {
    const runId = await finishedRun();
    const { token } = await tokenFor(runId);
    const db = new Client({ connectionString: app.databaseUrl });
    await db.connect();
    try {
      await db.query(`UPDATE runs SET finished_at = now() - interval '9 minutes' WHERE id = $1`, [runId]);
      expect((await api(app.url, 'GET', `/v1/runs/${runId}/events?token=${token}`)).status).toBe(200);
      await db.query(`UPDATE runs SET finished_at = now() - interval '11 minutes' WHERE id = $1`, [runId]);
      const expired = await api(app.url, 'GET', `/v1/runs/${runId}/events?token=${token}`);
      expect(expired.status).toBe(401);
      expect(expired.body.message).toMatch(/expired/);
      // The key itself still reads it.
      expect((await api(app.url, 'GET', `/v1/runs/${runId}/events`, undefined, KEY_A)).status).toBe(200);
    } finally {
      await db.end();
    }
  });
});

/** The response with its body ended (cleanly, as a closed connection looks) after `reads` network reads. */
function cutAfter(res: Response, reads: number): Response {
  const reader = res.body!.getReader();
  let left = reads;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done || --left < 0) {
        controller.close();
        await reader.cancel();
        return;
      }
      controller.enqueue(value);
    },
  });
  return new Response(body, { status: res.status, headers: res.headers });
}
