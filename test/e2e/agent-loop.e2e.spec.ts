import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeUpstream, raw, text, toolCalls, type RecordedRequest } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { answerOf, api, eventKinds, openStream, type StreamEvent } from '../support/sse-client';

const types = (events: StreamEvent[]) => eventKinds(events);
const ofType = (events: StreamEvent[], type: string) =>
  events.filter((e) => e.event === type).map((e) => e.data);
const bodyOf = (r: RecordedRequest) => r.body as any;

describe('the agent loop over HTTP (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, MAX_ITERATIONS: '4', TOOL_TIMEOUT_MS: '1000' });
    writeFileSync(join(app.workspace, 'README.md'), '# Demo\nHello from the workspace.\n');
    mkdirSync(join(app.workspace, 'src'));
    writeFileSync(join(app.workspace, 'src', 'a.ts'), 'export const a = 1;\n');
    writeFileSync(join(app.workspace, 'src', 'b.ts'), 'export const b = 2;\n');
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  async function chat(body: Record<string, unknown>): Promise<StreamEvent[]> {
    const stream = await openStream(`${app.url}/v1/chat`, { body });
    expect(stream.status).toBe(200);
    return stream.rest();
  }

  it('runs one tool call and feeds its result back to the model', async () => {
    upstream.enqueue(
      toolCalls([{ id: 'call_1', name: 'read_file', arguments: { path: 'README.md' } }]),
      text('It says hello.'),
    );
    const events = await chat({ prompt: 'What does the README say?' });

    expect(types(events)).toEqual([
      'run_started',
      'tool_call_start',
      'step_finished',
      'tool_call_result',
      'text',
      'step_finished',
      'done',
    ]);
    expect(answerOf(events)).toBe('It says hello.');
    expect(ofType(events, 'tool_call_start')[0]).toMatchObject({
      toolCallId: 'call_1',
      name: 'read_file',
      arguments: { path: 'README.md' },
      executor: 'server',
    });
    const result = ofType(events, 'tool_call_result')[0];
    expect(result).toMatchObject({ toolCallId: 'call_1', name: 'read_file', isError: false });
    expect(result.content).toContain('Hello from the workspace.');
    expect(typeof result.durationMs).toBe('number');
    expect(ofType(events, 'step_finished').map((s) => s.finishReason)).toEqual(['tool_calls', 'stop']);
    expect(events.at(-1)!.data).toMatchObject({ status: 'completed', iterations: 2 });

    // The exact bodies the upstream received.
    const [first, second] = upstream.requests.map(bodyOf);
    expect(first.stream).toBe(true);
    expect(first.stream_options).toEqual({ include_usage: true });
    expect(first.tools.map((t: any) => t.function.name)).toEqual(
      expect.arrayContaining(['read_file', 'list_directory', 'search_files', 'glob']),
    );
    expect(
      first.tools.every((t: any) => t.type === 'function' && typeof t.function.parameters === 'object'),
    ).toBe(true);
    expect(first).not.toHaveProperty('tool_choice');
    expect(first.messages.map((m: any) => m.role)).toEqual(['system', 'user']);
    expect(second.messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'read_file', arguments: '{"path":"README.md"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: result.content },
    ]);
  });

  it('chains three calls, one per step, and stores every call with its result', async () => {
    upstream.enqueue(
      toolCalls([{ name: 'list_directory', arguments: {} }]),
      toolCalls([{ name: 'glob', arguments: { pattern: 'src/**/*.ts' } }]),
      toolCalls([{ name: 'read_file', arguments: { path: 'src/a.ts' } }]),
      text('a is 1.'),
    );
    const events = await chat({ prompt: 'What is a?' });
    expect(ofType(events, 'tool_call_result').map((r) => [r.name, r.isError])).toEqual([
      ['list_directory', false],
      ['glob', false],
      ['read_file', false],
    ]);
    expect(ofType(events, 'tool_call_result')[1].content).toContain('src/a.ts');
    expect(events.at(-1)!.data).toMatchObject({ status: 'completed', iterations: 4 });
    const session = await api(app.url, 'GET', `/v1/sessions/${events[0].data.sessionId}`);
    expect(session.body.messages.map((m: any) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
  });

  it('runs parallel calls of one response and returns the results in the order asked', async () => {
    upstream.enqueue(
      toolCalls([
        { id: 'call_a', name: 'read_file', arguments: { path: 'src/a.ts' } },
        { id: 'call_b', name: 'read_file', arguments: { path: 'src/b.ts' } },
      ]),
      text('Both read.'),
    );
    const events = await chat({ prompt: 'Read both.' });
    expect(ofType(events, 'tool_call_start').map((s) => s.toolCallId)).toEqual(['call_a', 'call_b']);
    expect(
      ofType(events, 'tool_call_result')
        .map((r) => r.toolCallId)
        .sort(),
    ).toEqual(['call_a', 'call_b']);
    const tools = bodyOf(upstream.requests[1]).messages.filter((m: any) => m.role === 'tool');
    expect(tools.map((m: any) => m.tool_call_id)).toEqual(['call_a', 'call_b']);
    expect(tools[0].content).toContain('export const a = 1;');
    expect(tools[1].content).toContain('export const b = 2;');
  });

  it('makes exactly MAX_ITERATIONS model calls, the last without tools, and leaves a valid history', async () => {
    upstream.fallback = (request) =>
      toolCalls([{ name: 'read_file', arguments: { path: `src/${request.index % 2 ? 'a' : 'b'}.ts` } }]);
    const events = await chat({ prompt: 'Loop forever.' });

    expect(upstream.requests).toHaveLength(4);
    expect(bodyOf(upstream.requests[3]).tool_choice).toBe('none');
    const done = events.at(-1)!.data;
    expect(done).toMatchObject({ type: 'done', status: 'max_iterations', iterations: 4 });
    expect(ofType(events, 'step_finished')).toHaveLength(4);
    const last = ofType(events, 'tool_call_result').at(-1)!;
    expect(last).toMatchObject({ isError: true, errorCode: 'MAX_ITERATIONS' });

    const run = await api(app.url, 'GET', `/v1/runs/${done.runId}`);
    expect(run.body).toMatchObject({ status: 'max_iterations', iterations: 4 });
    const session = await api(app.url, 'GET', `/v1/sessions/${done.sessionId}`);
    const calls = session.body.messages.flatMap((m: any) => m.toolCalls ?? []).map((c: any) => c.id);
    const answered = session.body.messages
      .filter((m: any) => m.role === 'tool')
      .map((m: any) => m.toolCallId);
    expect(answered).toEqual(calls);
  });

  it('counts model calls exactly and sends tool_choice none on the last one', async () => {
    let calls = 0;
    upstream.fallback = () => {
      calls++;
      return toolCalls([{ name: 'list_directory', arguments: { path: '.', depth: calls } }]);
    };
    await chat({ prompt: 'Keep listing.', maxIterations: 3 });
    expect(calls).toBe(3);
    const sent = upstream.requests.map(bodyOf);
    expect(sent.map((b) => b.tool_choice)).toEqual([undefined, undefined, 'none']);
  });

  it.each([
    [
      'an unknown tool',
      { name: 'delete_everything', arguments: {} },
      'UNKNOWN_TOOL',
      /no tool named delete_everything/,
    ],
    [
      'arguments that are not JSON',
      { name: 'read_file', arguments: '{"path": "README.md"' },
      'INVALID_ARGUMENTS',
      /not valid JSON/,
    ],
    [
      'arguments that break the schema',
      { name: 'read_file', arguments: { path: 42 } },
      'INVALID_ARGUMENTS',
      /path: must be string/,
    ],
    [
      'a path outside the workspace',
      { name: 'read_file', arguments: { path: '../../etc/passwd' } },
      'PERMISSION_DENIED',
      /outside the workspace/,
    ],
  ])('feeds %s back to the model as an error result and goes on', async (_label, call, code, message) => {
    upstream.enqueue(toolCalls([call]), text('Sorry about that.'));
    const events = await chat({ prompt: 'Try it.' });
    const result = ofType(events, 'tool_call_result')[0];
    expect(result).toMatchObject({ isError: true, errorCode: code });
    expect(result.content).toMatch(message);
    expect(events.at(-1)!.data.status).toBe('completed');
    const toolMessage = bodyOf(upstream.requests[1]).messages.at(-1);
    expect(toolMessage).toMatchObject({ role: 'tool', content: result.content });
  });

  it('aborts a tool that exceeds TOOL_TIMEOUT_MS and tells the model', async () => {
    writeFileSync(join(app.workspace, 'slow.txt'), `${'a'.repeat(40)}!\n`);
    upstream.enqueue(
      toolCalls([{ name: 'search_files', arguments: { query: '^(a+)+$', regex: true, path: 'slow.txt' } }]),
      text('That search was too slow.'),
    );
    const events = await chat({ prompt: 'Search.' });
    const result = ofType(events, 'tool_call_result')[0];
    expect(result).toMatchObject({ isError: true, errorCode: 'TIMEOUT' });
    expect(events.at(-1)!.data.status).toBe('completed');
  });

  it('refuses the same call a third time in a run (doom loop)', async () => {
    const same = () => toolCalls([{ name: 'read_file', arguments: { path: 'README.md' } }]);
    upstream.enqueue(same(), same(), same(), text('Stopping.'));
    const events = await chat({ prompt: 'Read it again and again.' });
    const results = ofType(events, 'tool_call_result');
    expect(results.map((r) => r.errorCode ?? 'ok')).toEqual(['ok', 'ok', 'REPEATED_CALL']);
    expect(results[2].content).toMatch(/already called 2 times/);
  });

  it('sends earlier tool calls and results verbatim with the next prompt', async () => {
    upstream.enqueue(
      toolCalls([{ id: 'call_x', name: 'read_file', arguments: { path: 'src/a.ts' } }]),
      text('a is 1.'),
    );
    const first = await chat({ prompt: 'What is a?' });
    const sessionId = first[0].data.sessionId;
    const earlier = bodyOf(upstream.requests[1]).messages;

    upstream.enqueue(text('Yes, still 1.'));
    const stream = await openStream(`${app.url}/v1/sessions/${sessionId}/messages`, {
      body: { content: 'Still?' },
    });
    await stream.rest();
    const next = bodyOf(upstream.requests[2]).messages;
    expect(next.slice(0, earlier.length)).toEqual(earlier);
    expect(next.slice(earlier.length)).toEqual([
      { role: 'assistant', content: 'a is 1.' },
      { role: 'user', content: 'Still?' },
    ]);
  });

  it('never streams reasoning as text nor stores it as the answer', async () => {
    upstream.enqueue(reasoningThenAnswer);
    const events = await chat({ prompt: 'Think.', tools: [] });
    expect(
      ofType(events, 'text')
        .map((t) => t.delta)
        .join(''),
    ).toBe('Answer.');
    const session = await api(app.url, 'GET', `/v1/sessions/${events[0].data.sessionId}`);
    expect(session.body.messages.at(-1).content).toBe('Answer.');
  });

  it('recovers a tool call a model wrote into its text, behind TOOL_CALL_TEXT_RECOVERY', async () => {
    const recovering = await startApp(
      { OPENAI_BASE_URL: upstream.baseUrl, TOOL_CALL_TEXT_RECOVERY: 'true', WORKSPACE_ROOT: app.workspace },
      app.databaseUrl,
    );
    try {
      upstream.enqueue(
        text(
          'Let me look. <tool_call>{"name": "read_file", "arguments": {"path": "README.md"}}</tool_call>',
          {
            pieces: [
              'Let me look. <tool',
              '_call>{"name": "read_file", "argu',
              'ments": {"path": "README.md"}}</tool_call>',
            ],
          },
        ),
        text('It says hello.'),
      );
      const events = await (
        await openStream(`${recovering.url}/v1/chat`, { body: { prompt: 'Read it.' } })
      ).rest();
      expect(ofType(events, 'text')[0].delta).toBe('Let me look. ');
      expect(
        ofType(events, 'text')
          .map((t) => t.delta)
          .join(''),
      ).not.toContain('<tool_call>');
      expect(ofType(events, 'tool_call_start')[0]).toMatchObject({
        name: 'read_file',
        arguments: { path: 'README.md' },
      });
      expect(ofType(events, 'tool_call_result')[0].content).toContain('Hello from the workspace.');
      expect(events.at(-1)!.data).toMatchObject({ status: 'completed', iterations: 2 });
    } finally {
      await recovering.close();
    }
  });

  it('lists the tools the model may be offered, with their policy per mode', async () => {
    const safe = await api(app.url, 'GET', '/v1/tools');
    expect(safe.status).toBe(200);
    const byName = Object.fromEntries(safe.body.map((t: any) => [t.name, t.policy]));
    expect(byName).toMatchObject({ read_file: 'allow', write_file: 'confirm', apply_patch: 'confirm' });
    expect(byName).not.toHaveProperty('run_command');
    const write = await api(app.url, 'GET', '/v1/tools?mode=write');
    expect(Object.fromEntries(write.body.map((t: any) => [t.name, t.policy]))).toMatchObject({
      write_file: 'allow',
    });
  });
});

/** A DeepSeek-style answer: reasoning_content first, then the answer. */
function reasoningThenAnswer(request: RecordedRequest) {
  const id = `chatcmpl-r${request.index}`;
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return raw(
    chunk({ role: 'assistant', content: null, reasoning_content: 'Let me think' }) +
      chunk({ reasoning_content: ' hard.' }) +
      chunk({ content: 'Answer.' }) +
      chunk({}, 'stop') +
      'data: [DONE]\n\n',
  );
}
