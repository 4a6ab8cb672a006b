import { startApp, type TestApp } from '../support/app';
import { FakeUpstream, text, type RecordedRequest } from '../support/fake-upstream';
import { api, openStream } from '../support/sse-client';

/**
 * One on-demand compaction of a session at a time: parallel `POST /v1/sessions/:id/compact` give
 * one summary and 409s that made no model call (they were 500s, each after a billed call).
 */

const isSummaryCall = (r: RecordedRequest) => !r.body.tools || r.body.tools.length === 0;

describe('on-demand compactions of one session (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, RATE_LIMIT_RUNS_PER_MINUTE: '100000' });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  async function sessionWithHistory(): Promise<string> {
    upstream.fallback = (r) => (isSummaryCall(r) ? text('Summary: they said hello twice.') : text('Hello.'));
    const created = await api(app.url, 'POST', '/v1/sessions', {});
    expect(created.status).toBe(201);
    for (const content of ['Hi.', 'Hi again.']) await prompt(created.body.id, content);
    upstream.requests.length = 0;
    return created.body.id;
  }

  async function prompt(sessionId: string, content: string) {
    const stream = await openStream(`${app.url}/v1/sessions/${sessionId}/messages`, { body: { content } });
    expect(stream.status).toBe(200);
    const events = await stream.rest(30_000);
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
  }

  /** Holds the first summary call's answer until `release` (the compaction under way meanwhile). */
  function holdFirstSummary() {
    let release!: () => void;
    const released = new Promise<void>((done) => (release = done));
    let held = false;
    upstream.beforeAnswer = (r) => {
      if (!isSummaryCall(r) || held) return Promise.resolve();
      held = true;
      return released;
    };
    return release;
  }

  const compact = (sessionId: string) => api(app.url, 'POST', `/v1/sessions/${sessionId}/compact`);
  const summaries = async (sessionId: string) =>
    ((await api(app.url, 'GET', `/v1/sessions/${sessionId}`)).body.messages as { kind?: string }[]).filter(
      (m) => m.kind === 'summary',
    );

  it('answers one of four parallel compactions with the summary and the others 409 before any model call', async () => {
    const sessionId = await sessionWithHistory();
    const release = holdFirstSummary();

    const first = compact(sessionId);
    let others;
    try {
      await upstream.waitForRequests(1);
      others = await Promise.all([compact(sessionId), compact(sessionId), compact(sessionId)]);
    } finally {
      release();
    }
    const won = await first;
    expect(others.map((r) => r.status)).toEqual([409, 409, 409]);
    for (const r of others) expect(r.body.message).toMatch(/is being compacted/);
    expect(won.status).toBe(200);
    expect(won.body).toMatchObject({ role: 'system', kind: 'summary' });
    expect(upstream.requests.filter(isSummaryCall)).toHaveLength(1);
    expect(await summaries(sessionId)).toHaveLength(1);
  });
});
