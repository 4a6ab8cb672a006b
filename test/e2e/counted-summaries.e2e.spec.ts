import { endless, FakeUpstream, text, type RecordedRequest } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { proseOf } from '../support/long-session';
import { api, openStream, type StreamEvent } from '../support/sse-client';

/** A summary's call is the one without tools. */
const isSummaryCall = (r: RecordedRequest) => !r.body.tools || r.body.tools.length === 0;
const ANSWER = { promptTokens: 10, completionTokens: 2 };

/**
 * An automatic summary is a model call like any ("Budgets and usage", "Long sessions"): cut by
 * ANSWER_MAX_BYTES before its usage came, it is estimated and counted in its run's usage.
 */
describe('a summary the provider did not report (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      LLM_MODEL: 'tiny-window-model',
      LLM_CONTEXT_TOKENS: '8000',
      ANSWER_MAX_BYTES: '4096',
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  async function prompt(sessionId: string, content: string): Promise<StreamEvent[]> {
    const stream = await openStream(`${app.url}/v1/sessions/${sessionId}/messages`, { body: { content } });
    expect(stream.status).toBe(200);
    return stream.rest(30_000);
  }

  it("counts an automatic summary cut by ANSWER_MAX_BYTES, estimated, in its run's done.usage and GET /v1/usage", async () => {
    upstream.fallback = (r) => (isSummaryCall(r) ? endless('abc€') : text('Noted.', { usage: ANSWER }));
    const sessionId: string = (await api(app.url, 'POST', '/v1/sessions', {})).body.id;
    await prompt(sessionId, `Remember this: ${proseOf(24 * 1024, 1)}`);
    const events = await prompt(sessionId, 'And now?');

    expect(events.map((e) => e.event)).toContain('context_compacted');
    expect(upstream.requests.filter(isSummaryCall)).toHaveLength(1);
    const done = events.at(-1)!.data;
    expect(done).toMatchObject({ type: 'done', status: 'completed', usage: { estimated: true } });
    // The answer's 10 + 2, and the summary's prompt (the transcript) and its 4,096 bytes of text.
    expect(done.usage.promptTokens).toBeGreaterThan(ANSWER.promptTokens + 1000);
    expect(done.usage.completionTokens).toBeGreaterThan(ANSWER.completionTokens + 500);

    const from = new Date(Date.now() - 3600_000).toISOString();
    const usage = await api(app.url, 'GET', `/v1/usage?from=${from}&groupBy=session`);
    expect(usage.body.data).toEqual([
      expect.objectContaining({
        sessionId,
        runs: 2,
        promptTokens: ANSWER.promptTokens + done.usage.promptTokens,
        completionTokens: ANSWER.completionTokens + done.usage.completionTokens,
      }),
    ]);
  });
});
