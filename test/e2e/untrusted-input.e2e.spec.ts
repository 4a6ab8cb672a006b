import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startApp, type TestApp } from '../support/app';
import { connect } from '../support/database';
import { endless, FakeUpstream, raw, text, toolCalls } from '../support/fake-upstream';
import { chatChunk, sseData, SSE_DONE } from '../support/sse-chunks';
import { api, openStream, type StreamEvent } from '../support/sse-client';

/**
 * What a client or a model sends cannot crash the server or make a stream claim what the store
 * lacks: text PostgreSQL cannot hold becomes U+FFFD, deep JSON is refused, and a model call ends
 * however its upstream ends. Through the real app, the real openai SDK and a fake upstream.
 */

const FFFD = '\uFFFD';
/** Commands need PATH to find programs. */
const BASE_ENV = {
  PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
  HOME: process.env.HOME ?? '/tmp',
};

const ofType = (events: StreamEvent[], type: string) =>
  events.filter((e) => e.event === type).map((e) => e.data);
const textOf = (events: StreamEvent[]) =>
  ofType(events, 'text')
    .map((d) => d.delta as string)
    .join('');
const last = (events: StreamEvent[]) => events.at(-1)!;

/** `[…[ ]…]` nested `depth` levels deep, as JSON text. */
const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('text PostgreSQL cannot hold, deep JSON and how an upstream stream ends (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      ...BASE_ENV,
      OPENAI_BASE_URL: upstream.baseUrl,
      ENABLE_RUN_COMMAND: 'true',
      TOOL_POLICY: 'run_command=allow',
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  async function chat(body: Record<string, unknown>): Promise<StreamEvent[]> {
    const stream = await openStream(`${app.url}/v1/chat`, { body });
    expect(stream.status).toBe(200);
    return stream.rest();
  }

  async function query<T = Record<string, unknown>>(sql: string, params: unknown[]): Promise<T[]> {
    const client = await connect(app.databaseUrl);
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  }

  /** The stream said nothing the store lacks, and the store holds what the stream said. */
  async function expectStoredAsStreamed(events: StreamEvent[]): Promise<void> {
    const runId = events[0].data.runId as string;
    const stored = await query<{ data: unknown }>(
      'SELECT payload AS data FROM run_events WHERE run_id = $1 ORDER BY seq',
      [runId],
    );
    expect(stored.map((r) => r.data)).toEqual(events.map((e) => e.data));
  }

  async function storedMessages(runId: string) {
    return query<{ role: string; content: string | null }>(
      'SELECT role, content FROM messages WHERE run_id = $1 ORDER BY seq',
      [runId],
    );
  }

  async function expectServerAlive(): Promise<void> {
    expect((await fetch(`${app.url}/health/live`)).status).toBe(200);
    expect((await fetch(`${app.url}/health/ready`)).status).toBe(200);
  }

  describe('U+0000 and lone surrogates become U+FFFD, streamed and stored alike', () => {
    it('in the model text', async () => {
      upstream.enqueue(text('a\u0000b\ud800c', { pieces: ['a\u0000b', '\ud800c', '\udc00!'] }));
      const events = await chat({ prompt: 'Say something odd.' });
      expect(last(events).data).toMatchObject({ type: 'done', status: 'completed' });
      expect(textOf(events)).toBe(`a${FFFD}b${FFFD}c${FFFD}!`);
      expect((await storedMessages(events[0].data.runId)).at(-1)).toEqual({
        role: 'assistant',
        content: `a${FFFD}b${FFFD}c${FFFD}!`,
      });
      await expectStoredAsStreamed(events);
    });

    it('keeps a surrogate pair split across two upstream deltas intact', async () => {
      upstream.enqueue(text('x😀y', { pieces: ['x\ud83d', '\ude00y'] }));
      const events = await chat({ prompt: 'An emoji, please.' });
      expect(textOf(events)).toBe('x😀y');
      expect((await storedMessages(events[0].data.runId)).at(-1)!.content).toBe('x😀y');
      await expectStoredAsStreamed(events);
    });

    it('in tool-call arguments, as characters and as JSON escapes, and the run goes on', async () => {
      upstream.enqueue(
        toolCalls([
          { id: 'call_escaped', name: 'read_file', arguments: '{"path":"a\\u0000b\\ud800.txt"}' },
          { id: 'call_raw', name: 'read_file', arguments: '{"path":"c\u0000d\ud800.txt"}' },
        ]),
        text('Neither exists.'),
      );
      const events = await chat({ prompt: 'Read the odd files.' });
      expect(last(events).data).toMatchObject({ type: 'done', status: 'completed', iterations: 2 });
      const starts = ofType(events, 'tool_call_start');
      expect(starts.map((s) => s.arguments)).toEqual([
        { path: `a${FFFD}b${FFFD}.txt` },
        { path: `c${FFFD}d${FFFD}.txt` },
      ]);
      expect(
        ofType(events, 'tool_call_result')
          .map((r) => [r.toolCallId, r.isError])
          .sort(),
      ).toEqual([
        ['call_escaped', true],
        ['call_raw', true],
      ]);
      const calls = await query<{ call_id: string; arguments: unknown; raw_arguments: string }>(
        'SELECT call_id, arguments, raw_arguments FROM tool_calls WHERE run_id = $1 ORDER BY position',
        [events[0].data.runId],
      );
      expect(calls).toEqual([
        // The escapes are storable text as written; the parsed value has the replacements.
        {
          call_id: 'call_escaped',
          arguments: starts[0].arguments,
          raw_arguments: '{"path":"a\\u0000b\\ud800.txt"}',
        },
        {
          call_id: 'call_raw',
          arguments: starts[1].arguments,
          raw_arguments: `{"path":"c${FFFD}d${FFFD}.txt"}`,
        },
      ]);
      await expectStoredAsStreamed(events);
    });

    it('in a prompt: 200, stored and sent to the model with U+FFFD', async () => {
      upstream.enqueue(text('Noted.'));
      const events = await chat({ prompt: 'hi\u0000there\ud800', title: 'odd\u0000title' });
      expect(last(events).data).toMatchObject({ type: 'done', status: 'completed' });
      const messages = await storedMessages(events[0].data.runId);
      expect(messages[0]).toEqual({ role: 'user', content: `hi${FFFD}there${FFFD}` });
      expect(
        (upstream.requests[0].body.messages as Array<{ role: string; content: unknown }>).at(-1),
      ).toEqual({
        role: 'user',
        content: `hi${FFFD}there${FFFD}`,
      });
      const session = await api(app.url, 'GET', `/v1/sessions/${events[0].data.sessionId}`);
      expect(session.body.title).toBe(`odd${FFFD}title`);
    });

    it('in a client tool result: 202, streamed, stored and sent to the model with U+FFFD', async () => {
      upstream.enqueue(toolCalls([{ id: 'call_note', name: 'get_note', arguments: {} }]), text('Thanks.'));
      const stream = await openStream(`${app.url}/v1/chat`, {
        body: {
          prompt: 'Get the note.',
          clientTools: [{ type: 'function', function: { name: 'get_note', parameters: { type: 'object' } } }],
        },
      });
      const head = await stream.until('tool_call_start');
      const runId = head[0].data.runId as string;
      const posted = await api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/call_note/result`, {
        content: 'note\u0000with\ud800odd text',
      });
      expect(posted.status).toBe(202);
      const events = [...head, ...(await stream.rest())];
      expect(last(events).data).toMatchObject({ type: 'done', status: 'completed' });
      const expected = `note${FFFD}with${FFFD}odd text`;
      expect(ofType(events, 'tool_call_result')[0]).toMatchObject({
        toolCallId: 'call_note',
        content: expected,
      });
      expect((await storedMessages(runId)).find((m) => m.role === 'tool')!.content).toBe(expected);
      expect((upstream.requests[1].body.messages as Array<{ content: unknown }>).at(-1)!.content).toBe(
        expected,
      );
      await expectStoredAsStreamed(events);
    });

    it('in a workspace file with a NUL after its first 8 KB, read with read_file in safe mode', async () => {
      writeFileSync(join(app.workspace, 'dump.log'), `${'x'.repeat(9000)}\u0000tail\n`);
      upstream.enqueue(
        toolCalls([{ id: 'call_log', name: 'read_file', arguments: { path: 'dump.log' } }]),
        text('Read.'),
      );
      const events = await chat({ prompt: 'Read the log.' });
      expect(last(events).data).toMatchObject({ type: 'done', status: 'completed' });
      const result = ofType(events, 'tool_call_result')[0];
      expect(result.isError).toBe(false);
      expect(result.content).toContain(`x${FFFD}tail`);
      await expectStoredAsStreamed(events);
      await expectServerAlive();
    });

    it('in the output of a command, live and in its result', async () => {
      upstream.enqueue(
        toolCalls([{ id: 'call_nul', name: 'run_command', arguments: { command: "printf 'a\\000b\\n'" } }]),
        text('Printed.'),
      );
      const events = await chat({ prompt: 'Print a NUL.', mode: 'exec' });
      expect(last(events).data).toMatchObject({ type: 'done', status: 'completed' });
      const output = ofType(events, 'tool_call_output')
        .map((o) => o.chunk as string)
        .join('');
      expect(output).toContain(`a${FFFD}b`);
      const result = ofType(events, 'tool_call_result')[0];
      expect(result).toMatchObject({ toolCallId: 'call_nul', isError: false });
      expect(result.content).toContain(`a${FFFD}b`);
      await expectStoredAsStreamed(events);
      await expectServerAlive();
    });
  });

  describe('JSON nested more than 64 levels', () => {
    const post = (path: string, body: string) =>
      fetch(`${app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

    it('is a 400 in a body, not a 500, even 50,000 levels deep', async () => {
      const res = await post('/v1/chat', `{"prompt":"hi","clientTools":${nestedArrays(50_000)}}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        statusCode: 400,
        message: 'Request body is nested more than 64 levels deep',
        error: 'Bad Request',
      });
      await expectServerAlive();
    });

    it('counts the outermost object as level 1: 64 levels pass, 65 are refused', async () => {
      // body(1) clientTools(2) tool(3) function(4) parameters(5), then arrays inside parameters.
      const body = (depth: number) =>
        `{"clientTools":[{"type":"function","function":{"name":"deep","parameters":{"type":"object","x-meta":${nestedArrays(depth - 5)}}}}]}`;
      expect((await post('/v1/sessions', body(64))).status).toBe(201);
      const refused = await post('/v1/sessions', body(65));
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { message: string }).message).toContain('64 levels');
    });

    it('is an INVALID_ARGUMENTS result in tool arguments 20,000 levels deep, and the run goes on', async () => {
      const deep = `{"path":${nestedArrays(20_000)}}`;
      upstream.enqueue(toolCalls([{ id: 'call_deep', name: 'read_file', arguments: deep }]), text('Sorry.'));
      const events = await chat({ prompt: 'Go deep.' });
      const result = ofType(events, 'tool_call_result')[0];
      expect(result).toMatchObject({
        toolCallId: 'call_deep',
        isError: true,
        errorCode: 'INVALID_ARGUMENTS',
      });
      expect(result.content).toContain('64 levels');
      expect(last(events).data).toMatchObject({ type: 'done', status: 'completed', iterations: 2 });
      expect(textOf(events)).toBe('Sorry.');
      // The model is told, with its own arguments sent back as a string.
      expect((upstream.requests[1].body.messages as Array<{ role: string }>).at(-1)).toMatchObject({
        role: 'tool',
        content: result.content,
      });
      await expectStoredAsStreamed(events);
    });
  });

  describe('tool-call arguments past the limit of one model call (4 Mi characters)', () => {
    const LIMIT = '4,194,304';

    /** The call was announced with `{}`, answered INVALID_ARGUMENTS naming the limit, and the run went on. */
    function expectRefusedAndContinued(events: StreamEvent[], toolCallId: string) {
      expect(ofType(events, 'tool_call_start')).toEqual([
        expect.objectContaining({ toolCallId, name: 'write_file', arguments: {}, executor: 'server' }),
      ]);
      const [result] = ofType(events, 'tool_call_result');
      expect(result).toMatchObject({ toolCallId, isError: true, errorCode: 'INVALID_ARGUMENTS' });
      expect(result.content).toContain(LIMIT);
      expect(ofType(events, 'step_finished').map((s) => s.finishReason)).toEqual(['length', 'stop']);
      expect(last(events).data).toMatchObject({ type: 'done', status: 'completed', iterations: 2 });
      expect(textOf(events)).toBe('I will write it in parts.');
    }

    /** The model's second request holds the refused call and its result, as the store does. */
    async function expectModelSawWhatIsStored(events: StreamEvent[], toolCallId: string) {
      expect(upstream.requests).toHaveLength(2);
      const sent = upstream.requests[1].body.messages as unknown as Record<string, any>[];
      expect(sent.at(-2)).toMatchObject({
        role: 'assistant',
        tool_calls: [{ id: toolCallId, function: { name: 'write_file', arguments: '{}' } }],
      });
      expect(sent.at(-1)).toMatchObject({ role: 'tool', tool_call_id: toolCallId });
      expect(sent.at(-1)!.content).toContain(LIMIT);
      const session = await api(app.url, 'GET', `/v1/sessions/${events[0].data.sessionId}`);
      const stored = session.body.messages as Record<string, any>[];
      expect(stored.map((m) => m.role)).toEqual([...sent.map((m) => m.role), 'assistant']);
      for (const m of stored.filter((x) => x.role === 'assistant'))
        expect(Boolean(m.content) || (m.toolCalls?.length ?? 0) > 0).toBe(true);
      await expectStoredAsStreamed(events);
    }

    it('refuses a call whose arguments pass the limit: announced, answered INVALID_ARGUMENTS, the run goes on', async () => {
      const content = 'x'.repeat(4 * 1024 * 1024);
      upstream.enqueue(
        toolCalls([{ id: 'call_big', name: 'write_file', arguments: { path: 'big.txt', content } }], {
          pieces: 8,
        }),
        text('I will write it in parts.'),
      );
      const events = await chat({ prompt: 'Write a big file.', mode: 'write' });
      expectRefusedAndContinued(events, 'call_big');
      await expectModelSawWhatIsStored(events, 'call_big');
      await expectServerAlive();
    });

    it('closes a model request whose arguments stream without end, and refuses the call the same way', async () => {
      upstream.enqueue(
        endless('y'.repeat(64 * 1024), { toolCall: { id: 'call_endless', name: 'write_file' } }),
        text('I will write it in parts.'),
      );
      const events = await chat({ prompt: 'Write forever.', mode: 'write' });
      await upstream.waitForAborted(1);
      expectRefusedAndContinued(events, 'call_endless');
      await expectModelSawWhatIsStored(events, 'call_endless');
    });
  });

  describe('an answer of nothing', () => {
    it('stores no empty assistant message (done.messageId null), so the next prompt sends none', async () => {
      upstream.enqueue(text(''), text('Now something.'));
      const events = await chat({ prompt: 'Say nothing.' });
      expect(last(events).data).toMatchObject({ type: 'done', status: 'completed', messageId: null });
      expect(await storedMessages(events[0].data.runId)).toEqual([{ role: 'user', content: 'Say nothing.' }]);

      const next = await chat({ prompt: 'Say something.', sessionId: events[0].data.sessionId });
      expect(last(next).data).toMatchObject({ type: 'done', status: 'completed' });
      const sent = upstream.requests[1].body.messages.map((m) => m.role);
      expect(sent).toEqual(['system', 'user', 'user']);
    });
  });

  describe('how the upstream stream ends', () => {
    it('[DONE] without a finish reason: step_finished says stop and the run completes', async () => {
      upstream.enqueue(raw(sseData(chatChunk({ role: 'assistant', content: 'Hi there' })) + SSE_DONE));
      const events = await chat({ prompt: 'Hello.' });
      expect(ofType(events, 'step_finished').map((s) => s.finishReason)).toEqual(['stop']);
      expect(last(events).data).toMatchObject({ type: 'done', status: 'completed' });
      expect(textOf(events)).toBe('Hi there');
    });

    it('closed without [DONE] and without a finish reason: the run fails, retryable UPSTREAM_CONNECTION', async () => {
      upstream.enqueue(raw(sseData(chatChunk({ role: 'assistant', content: 'Hi th' }))));
      const events = await chat({ prompt: 'Hello.' });
      expect(last(events).data).toMatchObject({
        type: 'error',
        code: 'UPSTREAM_CONNECTION',
        retryable: true,
      });
      const run = await api(app.url, 'GET', `/v1/runs/${events[0].data.runId}`);
      expect(run.body.status).toBe('failed');
      expect((await storedMessages(events[0].data.runId)).at(-1)).toEqual({
        role: 'assistant',
        content: 'Hi th',
      });
    });
  });
});

describe('an endless upstream with a small ANSWER_MAX_BYTES (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, ANSWER_MAX_BYTES: '4096' });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('cuts the answer at a character boundary, closes the model request, finishes with length and completes', async () => {
    upstream.enqueue(endless('abc€'));
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Never stop.' } });
    const events = await stream.rest();
    // 'abc€' is 6 bytes: 682 pieces are 4092 bytes, then 'abc' fits and '€' would cross 4096.
    const expected = `${'abc€'.repeat(682)}abc`;
    expect(textOf(events)).toBe(expected);
    expect(ofType(events, 'step_finished').map((s) => s.finishReason)).toEqual(['length']);
    expect(last(events).data).toMatchObject({ type: 'done', status: 'completed', iterations: 1 });
    await upstream.waitForAborted(1);
    const session = await api(app.url, 'GET', `/v1/sessions/${events[0].data.sessionId}`);
    expect(session.body.messages.at(-1)).toMatchObject({ role: 'assistant', content: expected });
  });
});
