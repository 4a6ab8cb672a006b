import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { api, openStream } from '../support/sse-client';

const ALICE = { authorization: 'Bearer alice-secret-123' };
const BOB = { authorization: 'Bearer bob-secret-456' };

describe('one key never sees another key’s data, and limits hold per key (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      API_KEYS: 'alice:alice-secret-123,bob:bob-secret-456,carol:carol-secret-789',
      RATE_LIMIT_RUNS_PER_MINUTE: '3',
      MAX_ACTIVE_RUNS_PER_KEY: '1',
    });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  it("answers bob 404 on alice's session, run, events, approval, result and cancel — and lists per key", async () => {
    upstream.enqueue(
      toolCalls([{ id: 'call_w', name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }]),
      text('ok'),
    );
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Write.' }, headers: ALICE });
    const seen = await stream.until('tool_approval_required');
    const { runId, sessionId } = seen[0].data;

    const attempts = [
      api(app.url, 'GET', `/v1/sessions/${sessionId}`, undefined, BOB),
      api(app.url, 'DELETE', `/v1/sessions/${sessionId}`, undefined, BOB),
      api(app.url, 'POST', `/v1/sessions/${sessionId}/messages`, { content: 'hi' }, BOB),
      api(app.url, 'GET', `/v1/runs/${runId}`, undefined, BOB),
      api(app.url, 'GET', `/v1/runs/${runId}/events`, undefined, BOB),
      api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/call_w/approval`, { approve: true }, BOB),
      api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/call_w/result`, { content: 'x' }, BOB),
      api(app.url, 'POST', `/v1/runs/${runId}/cancel`, undefined, BOB),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(404);
      expect(JSON.stringify(res.body)).not.toContain('Write.');
    }
    const bobs = await api(app.url, 'GET', '/v1/sessions', undefined, BOB);
    expect(bobs.body.data.map((s: any) => s.id)).not.toContain(sessionId);
    const alices = await api(app.url, 'GET', '/v1/sessions', undefined, ALICE);
    expect(alices.body.data.map((s: any) => s.id)).toContain(sessionId);

    // Alice's run is untouched and still hers to decide.
    expect((await api(app.url, 'GET', `/v1/runs/${runId}`, undefined, ALICE)).body.status).toBe(
      'requires_action',
    );
    await api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/call_w/approval`, { approve: false }, ALICE);
    expect((await stream.rest()).at(-1)!.data.status).toBe('completed');
  });

  it('answers 409 for a busy session before any 429, and 429 with Retry-After past the limits', async () => {
    // carol: one active run at a time, three runs a minute.
    upstream.enqueue(toolCalls([{ name: 'write_file', arguments: { path: 'c.txt', content: 'c' } }]));
    const carol = { authorization: 'Bearer carol-secret-789' };
    const waiting = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Hold.' }, headers: carol });
    const seen = await waiting.until('tool_approval_required');
    const { sessionId, runId } = seen[0].data;

    const busy = await api(
      app.url,
      'POST',
      `/v1/sessions/${sessionId}/messages`,
      { content: 'again' },
      carol,
    );
    expect(busy.status).toBe(409);
    expect(busy.body.runId).toBe(runId);

    const second = await api(app.url, 'POST', '/v1/chat', { prompt: 'another session' }, carol);
    expect(second.status).toBe(429);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);

    await api(app.url, 'POST', `/v1/runs/${runId}/cancel`, undefined, carol);
    await waiting.rest();
    upstream.enqueue(text('two'), text('three'));
    expect(
      (await (await openStream(`${app.url}/v1/chat`, { body: { prompt: '2' }, headers: carol })).rest()).at(
        -1,
      )!.event,
    ).toBe('done');
    expect(
      (await (await openStream(`${app.url}/v1/chat`, { body: { prompt: '3' }, headers: carol })).rest()).at(
        -1,
      )!.event,
    ).toBe('done');
    const limited = await api(app.url, 'POST', '/v1/chat', { prompt: '4' }, carol);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Reads are never limited.
    for (let i = 0; i < 5; i++)
      expect((await api(app.url, 'GET', '/v1/sessions', undefined, carol)).status).toBe(200);
  });

  it('counts runs in /metrics after a run', async () => {
    upstream.enqueue(text('metered'));
    await (await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Count me.' }, headers: BOB })).rest();
    const metrics = await api(app.url, 'GET', '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/loopwright_runs_started_total \d+/);
    expect(metrics.body).toMatch(/loopwright_runs_finished_total\{status="completed"\} [1-9]/);
    expect(metrics.body).toMatch(/loopwright_tokens_total\{kind="completion"\} [1-9]/);
    expect(metrics.body).toMatch(/loopwright_model_time_to_first_token_seconds_count [1-9]/);
    expect(metrics.body).toMatch(
      /loopwright_tool_call_duration_seconds_count\{tool="write_file",outcome="REJECTED"\} 1/,
    );
  });
});
