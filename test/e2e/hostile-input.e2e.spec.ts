import { startApp, type TestApp } from '../support/app';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { api, openStream, type StreamEvent } from '../support/sse-client';

/**
 * What a key holder or a model can send to hurt others: a pattern that backtracks, tool names
 * invented to grow /metrics, forged cursors, and deletes that would reset the rate limit.
 */

const ofType = (events: StreamEvent[], type: string) =>
  events.filter((e) => e.event === type).map((e) => e.data);

/** A client tool whose one argument must match the catastrophic pattern. */
const REDOS_TOOL = {
  type: 'function',
  function: {
    name: 'check_word',
    description: 'Checks a word.',
    parameters: {
      type: 'object',
      properties: { word: { type: 'string', pattern: '^(a+)+$' } },
      required: ['word'],
    },
  },
};

describe('hostile input from key holders and models (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, RATE_LIMIT_RUNS_PER_MINUTE: '4' });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  it('checks a client tool pattern in linear time: a backtracking argument is INVALID_ARGUMENTS, announced as answered by the server, while health answers', async () => {
    // 40 `a`s and a `!` take a backtracking engine about 2^40 steps: the run would never get here.
    const word = `${'a'.repeat(40)}!`;
    upstream.enqueue(toolCalls([{ id: 'call_w', name: 'check_word', arguments: { word } }]), text('Done.'));
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'Check it.', clientTools: [REDOS_TOOL] },
    });
    const health = await fetch(`${app.url}/health/live`);
    expect(health.status).toBe(200);
    const events = await stream.rest();
    // Answered by the server itself: a client that runs tools on tool_call_start must not run it.
    expect(ofType(events, 'tool_call_start')[0]).toMatchObject({ toolCallId: 'call_w', executor: 'server' });
    expect(ofType(events, 'tool_call_result')[0]).toMatchObject({
      toolCallId: 'call_w',
      isError: true,
      errorCode: 'INVALID_ARGUMENTS',
    });
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
  });

  it('refuses a client tool pattern the linear-time engine cannot run, naming it', async () => {
    const backreference = {
      type: 'function',
      function: {
        name: 'twice',
        parameters: { type: 'object', properties: { s: { type: 'string', pattern: '^(a)\\1$' } } },
      },
    };
    const res = await api(app.url, 'POST', '/v1/sessions', { clientTools: [backreference] });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.message)).toContain('\\\\1');
  });

  it.each([['uniqueItems on an unbounded array (quadratic to check)', { type: 'array', uniqueItems: true }]])(
    'refuses a client tool schema with %s',
    async (_, items) => {
      const tool = {
        type: 'function',
        function: { name: 'costly', parameters: { type: 'object', properties: { list: items } } },
      };
      const res = await api(app.url, 'POST', '/v1/sessions', { clientTools: [tool] });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body.message)).toContain('uniqueItems');
    },
  );

  it('accepts uniqueItems with a bounded maxItems', async () => {
    const tool = {
      type: 'function',
      function: {
        name: 'bounded',
        parameters: {
          type: 'object',
          properties: { list: { type: 'array', uniqueItems: true, maxItems: 50 } },
        },
      },
    };
    expect((await api(app.url, 'POST', '/v1/sessions', { clientTools: [tool] })).status).toBe(201);
  });

  it('keeps tool names the model invents out of /metrics', async () => {
    const invented = `made_up_${Date.now()}`;
    upstream.enqueue(toolCalls([{ id: 'call_x', name: invented, arguments: {} }]), text('Sorry.'));
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Go.' } });
    const events = await stream.rest();
    expect(ofType(events, 'tool_call_result')[0]).toMatchObject({ errorCode: 'UNKNOWN_TOOL' });
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(metrics).not.toContain(invented);
    expect(metrics).toMatch(/loopwright_tool_call[a-z_]*\{[^}]*tool="unknown"/);
  });

  it.each([
    ['not base64 JSON', 'not-a-cursor'],
    ['a non-uuid id', Buffer.from(JSON.stringify(['2026-01-01 00:00:00+00', 'x'])).toString('base64url')],
    [
      'a time PostgreSQL refuses',
      Buffer.from(
        JSON.stringify(['2026-99-99 00:00:00+00', '6f1c0d4e-8a4b-4c36-9f0e-2f6b1a4c9d10']),
      ).toString('base64url'),
    ],
    ['a wrong shape', Buffer.from(JSON.stringify({ a: 1 })).toString('base64url')],
  ])('answers a forged cursor (%s) with a 400', async (_, cursor) => {
    const res = await api(app.url, 'GET', `/v1/sessions?cursor=${encodeURIComponent(cursor)}`);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.message)).toContain('cursor');
  });

  it('counts the runs a key started, so deleting their sessions does not reset the rate limit', async () => {
    // RATE_LIMIT_RUNS_PER_MINUTE=4; earlier tests of this file may have used some of the minute.
    const sessions: string[] = [];
    for (;;) {
      upstream.enqueue(text('ok'));
      const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'hi', tools: [] } });
      if (stream.status === 429) break;
      expect(stream.status).toBe(200);
      sessions.push(stream.headers.get('x-session-id')!);
      await stream.rest();
    }
    expect(sessions.length).toBeGreaterThan(0);
    for (const id of sessions) expect((await api(app.url, 'DELETE', `/v1/sessions/${id}`)).status).toBe(204);
    const again = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'hi', tools: [] } });
    expect(again.status).toBe(429);
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);
    again.close();
  });
});
