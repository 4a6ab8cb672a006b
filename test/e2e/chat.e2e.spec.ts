import { FakeUpstream, chunksThen, status, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { connect } from '../support/database';
import { eventually } from '../support/eventually';
import { answerOf, api, eventKinds, openStream } from '../support/sse-client';

describe('chat over SSE (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, LLM_MAX_RETRIES: '2' });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  it('streams a plain answer in order and stores the conversation', async () => {
    upstream.enqueue(text('Hello there, friend.', { pieces: ['Hello', ' there,', ' friend.'] }));
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'hi', tools: [] } });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await stream.rest();

    expect(eventKinds(events)).toEqual(['run_started', 'text', 'step_finished', 'done']);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    for (const e of events) expect(e.data.seq).toBe(e.id);
    expect(answerOf(events)).toBe('Hello there, friend.');
    const done = events.at(-1)!.data;
    expect(done).toMatchObject({ type: 'done', status: 'completed', iterations: 1 });
    expect(events.at(-2)!.data).toMatchObject({
      iteration: 1,
      finishReason: 'stop',
      usage: { promptTokens: 10, completionTokens: 3 },
    });

    const session = await api(app.url, 'GET', `/v1/sessions/${done.sessionId}`);
    expect(session.status).toBe(200);
    expect(session.body.messages.map((m: any) => [m.role, m.content])).toEqual([
      ['system', expect.any(String)],
      ['user', 'hi'],
      ['assistant', 'Hello there, friend.'],
    ]);
    expect(session.body.messages[2].id).toBe(done.messageId);

    const run = await api(app.url, 'GET', `/v1/runs/${done.runId}`);
    expect(run.body).toMatchObject({
      status: 'completed',
      iterations: 1,
      usage: { promptTokens: 10, completionTokens: 3 },
      error: null,
    });
    expect(run.body.finishedAt).not.toBeNull();

    const request = upstream.requests.at(-1)!.body as any;
    expect(request.stream).toBe(true);
    expect(request).not.toHaveProperty('tools');
    expect(request).not.toHaveProperty('tool_choice');
  });

  it('sends the whole history with a second prompt on the same session', async () => {
    upstream.enqueue(text('First answer.'), text('Second answer.'));
    const first = await (await openStream(`${app.url}/v1/chat`, { body: { prompt: 'one' } })).rest();
    const sessionId = first[0].data.sessionId;
    const second = await (
      await openStream(`${app.url}/v1/sessions/${sessionId}/messages`, { body: { content: 'two' } })
    ).rest();
    expect(second.at(-1)!.data.status).toBe('completed');
    const messages = (upstream.requests.at(-1)!.body as any).messages.map((m: any) => [m.role, m.content]);
    expect(messages.slice(1)).toEqual([
      ['user', 'one'],
      ['assistant', 'First answer.'],
      ['user', 'two'],
    ]);
  });

  it.each([
    ['a 500', () => status(500), 'UPSTREAM_UNAVAILABLE', true],
    ['a 429', () => status(429, undefined, { 'retry-after-ms': '5' }), 'UPSTREAM_RATE_LIMITED', true],
    ['a 400', () => status(400), 'UPSTREAM_BAD_REQUEST', false],
  ])(
    'ends with one error event after %s and keeps the server healthy',
    async (_label, response, code, retryable) => {
      // LLM_MAX_RETRIES=2: a retryable failure is tried three times in all.
      upstream.enqueue(...(retryable ? [response(), response(), response()] : [response()]));
      const before = upstream.requests.length;
      const events = await (
        await openStream(`${app.url}/v1/chat`, { body: { prompt: 'fail please' } })
      ).rest();
      expect(events.map((e) => e.event)).toEqual(['run_started', 'error']);
      expect(events[1].data).toMatchObject({ code, retryable });
      expect(upstream.requests.length - before).toBe(retryable ? 3 : 1);
      const run = await api(app.url, 'GET', `/v1/runs/${events[0].data.runId}`);
      expect(run.body).toMatchObject({ status: 'failed', error: { code } });
      expect((await api(app.url, 'GET', '/health/ready')).status).toBe(200);
    },
  );

  it.each([
    ['a reset connection', 'reset' as const, 'UPSTREAM_CONNECTION'],
    ['a malformed chunk', 'malformed' as const, 'UPSTREAM_MALFORMED'],
  ])(
    'stores the partial answer when the upstream fails mid-answer with %s',
    async (_label, failure, code) => {
      upstream.enqueue(chunksThen(['Partial ', 'answer'], failure));
      const events = await (await openStream(`${app.url}/v1/chat`, { body: { prompt: 'go' } })).rest();
      expect(eventKinds(events)).toEqual(['run_started', 'text', 'error']);
      expect(events.at(-1)!.data.code).toBe(code);
      const session = await api(app.url, 'GET', `/v1/sessions/${events[0].data.sessionId}`);
      expect(session.body.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Partial answer' });
      const run = await api(app.url, 'GET', `/v1/runs/${events[0].data.runId}`);
      expect(run.body.status).toBe('failed');
    },
  );

  it('lets a run finish and stores it when the client disconnects mid-answer', async () => {
    upstream.enqueue(text('one two three four five six seven eight', { delayMs: 40 }));
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'long' } });
    const started = await stream.until('text');
    stream.close();
    const runId = started[0].data.runId;
    await eventually(
      async () => (await api(app.url, 'GET', `/v1/runs/${runId}`)).body.status === 'completed',
    );
    const session = await api(app.url, 'GET', `/v1/sessions/${started[0].data.sessionId}`);
    expect(session.body.messages.at(-1).content).toBe('one two three four five six seven eight');
    const db = await connect(app.databaseUrl);
    try {
      const { rows } = await db.query('SELECT seq, type FROM run_events WHERE run_id = $1 ORDER BY seq', [
        runId,
      ]);
      expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
      expect(rows.at(-1).type).toBe('done');
    } finally {
      await db.end();
    }
  });

  it('fails a run whose upstream goes silent, as a retryable timeout', async () => {
    const quiet = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      LLM_IDLE_TIMEOUT_MS: '1000',
      LLM_MAX_RETRIES: '0',
    });
    try {
      upstream.enqueue(chunksThen(['Hello ', 'and then'], 'hang'));
      const events = await (
        await openStream(`${quiet.url}/v1/chat`, { body: { prompt: 'go', tools: [] } })
      ).rest();
      expect(eventKinds(events)).toEqual(['run_started', 'text', 'error']);
      expect(events.at(-1)!.data).toMatchObject({ code: 'UPSTREAM_TIMEOUT', retryable: true });
      await eventually(() => upstream.requests.at(-1)!.aborted);
    } finally {
      await quiet.close();
    }
  });

  it('starts exactly one of two prompts sent to one session at the same moment; the other is a 409 naming it', async () => {
    upstream.enqueue(text('first'));
    const first = await (
      await openStream(`${app.url}/v1/chat`, { body: { prompt: 'one', tools: [] } })
    ).rest();
    const sessionId = first[0].data.sessionId;
    upstream.fallback = text('slow', { firstDelayMs: 300 });
    const [a, b] = await Promise.all([
      openStream(`${app.url}/v1/sessions/${sessionId}/messages`, { body: { content: 'a' } }),
      openStream(`${app.url}/v1/sessions/${sessionId}/messages`, { body: { content: 'b' } }),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 409]);
    const [winner, loser] = a.status === 200 ? [a, b] : [b, a];
    const events = await winner.rest();
    expect(loser.errorBody.runId).toBe(events[0].data.runId);
    upstream.reset();
  });

  it('refuses session options next to a sessionId instead of ignoring them', async () => {
    upstream.enqueue(text('ok'));
    const first = await (
      await openStream(`${app.url}/v1/chat`, { body: { prompt: 'one', tools: [] } })
    ).rest();
    const res = await api(app.url, 'POST', '/v1/chat', {
      prompt: 'two',
      sessionId: first[0].data.sessionId,
      mode: 'write',
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.message)).toContain('mode');
  });

  it('answers 400 naming the field, 404 for unknown sessions, and 409 while a run is active', async () => {
    const bad = await api(app.url, 'POST', '/v1/chat', { prompt: 42 });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.message)).toContain('prompt');
    expect((await api(app.url, 'POST', '/v1/chat', { prompt: '' })).status).toBe(400);
    expect((await api(app.url, 'POST', '/v1/chat', { prompt: 'x', mode: 'yolo' })).status).toBe(400);
    expect((await api(app.url, 'POST', '/v1/chat', { prompt: 'x', maxIterations: '3' })).status).toBe(400);

    const missing = await api(app.url, 'POST', '/v1/sessions/6f1e0f52-8f7e-4c53-9a43-0d7b8f1f0a11/messages', {
      content: 'x',
    });
    expect(missing.status).toBe(404);
    expect((await api(app.url, 'GET', '/v1/runs/not-a-uuid')).status).toBe(404);

    upstream.enqueue(text('slow answer here', { firstDelayMs: 500 }));
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'busy?' } });
    const [started] = await stream.until('run_started');
    const busy = await api(app.url, 'POST', `/v1/sessions/${started.data.sessionId}/messages`, {
      content: 'again',
    });
    expect(busy.status).toBe(409);
    expect(busy.body.runId).toBe(started.data.runId);
    await stream.rest();
  });
});

describe('chat with ON_DISCONNECT=cancel (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, ON_DISCONNECT: 'cancel' });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  it('cancels the run, aborts the upstream request and keeps the partial text', async () => {
    upstream.enqueue(text('alpha beta gamma delta epsilon zeta eta theta', { delayMs: 60 }));
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'go' } });
    const seen = await stream.until((e) => e.event === 'text' && e.data.seq >= 3);
    stream.close();
    const runId = seen[0].data.runId;
    await eventually(
      async () => (await api(app.url, 'GET', `/v1/runs/${runId}`)).body.status === 'cancelled',
    );
    await eventually(async () => upstream.requests.at(-1)!.aborted);
    const session = await api(app.url, 'GET', `/v1/sessions/${seen[0].data.sessionId}`);
    const last = session.body.messages.at(-1);
    expect(last.role).toBe('assistant');
    expect(last.content.startsWith('alpha beta')).toBe(true);
    expect(last.content.length).toBeLessThan('alpha beta gamma delta epsilon zeta eta theta'.length);
  });
});
