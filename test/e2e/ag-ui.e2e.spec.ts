import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HttpAgent } from '@ag-ui/client';
import { EventType, type BaseEvent, type Message } from '@ag-ui/core';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';

const ALICE = 'Bearer alice-secret-123';

interface Result {
  runId: string;
  sessionId: string;
  status: string;
  pendingToolCalls: { toolCallId: string; name: string; waitingFor: string }[];
}

describe('POST /v1/ag-ui with @ag-ui/client HttpAgent (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, API_KEYS: 'alice:alice-secret-123' });
    writeFileSync(join(app.workspace, 'notes.txt'), 'the notes\n');
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  function agent(threadId: string): HttpAgent {
    return new HttpAgent({ url: `${app.url}/v1/ag-ui`, headers: { Authorization: ALICE }, threadId });
  }

  async function run(a: HttpAgent, params: Parameters<HttpAgent['runAgent']>[0] = {}) {
    const events: BaseEvent[] = [];
    const out = await a.runAgent(params, { onEvent: ({ event }) => void events.push(event) });
    return { events, result: out.result as Result, newMessages: out.newMessages };
  }

  const user = (id: string, content: string): Message => ({ id, role: 'user', content });

  it('streams a text answer; RUN_STARTED/RUN_FINISHED echo the client run id', async () => {
    upstream.enqueue(text('Hello there.'));
    const a = agent('thread-text');
    a.addMessage(user('u1', 'Say hello'));
    const { events, result, newMessages } = await run(a, {
      runId: 'client-run-1',
      context: [{ description: 'Locale', value: 'en-GB' }],
    });

    // Text that reaches the server between two writes is one event, so the pieces depend on timing.
    expect(events.map((e) => e.type).filter((t, i, all) => t !== all[i - 1])).toEqual([
      'RUN_STARTED',
      'STEP_STARTED',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'STEP_FINISHED',
      'RUN_FINISHED',
    ]);
    expect(events[0]).toMatchObject({ runId: 'client-run-1', threadId: 'thread-text' });
    expect(events.at(-1)).toMatchObject({ runId: 'client-run-1' });
    expect(result).toMatchObject({ status: 'completed', pendingToolCalls: [] });
    expect(result.runId).not.toBe('client-run-1');
    expect(newMessages.find((m) => m.role === 'assistant')).toMatchObject({ content: 'Hello there.' });

    // The context reached the model with the prompt.
    const sent = upstream.requests[0].body as { messages: { role: string; content: string }[] };
    expect(sent.messages.at(-1)!.content).toBe('Say hello\n\nLocale: en-GB');
    const stored = await fetch(`${app.url}/v1/runs/${result.runId}`, { headers: { authorization: ALICE } });
    expect(await stored.json()).toMatchObject({ status: 'completed', sessionId: result.sessionId });
  });

  it('shows a server tool call with its arguments and result', async () => {
    upstream.enqueue(
      toolCalls([{ id: 'call_read', name: 'read_file', arguments: { path: 'notes.txt' } }]),
      text('Notes read.'),
    );
    const a = agent('thread-server-tool');
    a.addMessage(user('u1', 'Read notes.txt'));
    const { events, result } = await run(a);

    const start = events.find((e) => e.type === EventType.TOOL_CALL_START);
    expect(start).toMatchObject({ toolCallId: 'call_read', toolCallName: 'read_file' });
    const args = events.find((e) => e.type === EventType.TOOL_CALL_ARGS) as unknown as { delta: string };
    expect(JSON.parse(args.delta)).toEqual({ path: 'notes.txt' });
    const toolResult = events.find((e) => e.type === EventType.TOOL_CALL_RESULT) as unknown as {
      content: string;
    };
    expect(toolResult.content).toContain('the notes');
    expect(events.filter((e) => e.type === EventType.STEP_STARTED)).toHaveLength(2);
    expect(result.status).toBe('completed');
  });

  it('hands a client tool to the client and continues the run with its tool message', async () => {
    upstream.enqueue(
      toolCalls([{ id: 'call_time', name: 'get_browser_time', arguments: {} }]),
      text('It is noon.'),
    );
    const a = agent('thread-client-tool');
    const tools = [
      {
        name: 'get_browser_time',
        description: 'The browser clock',
        parameters: { type: 'object', properties: {} },
      },
    ];
    a.addMessage(user('u1', 'What time is it?'));
    const first = await run(a, { tools });

    expect(first.result).toMatchObject({
      status: 'requires_action',
      pendingToolCalls: [{ toolCallId: 'call_time', name: 'get_browser_time', waitingFor: 'result' }],
    });
    expect(first.events.at(-1)!.type).toBe('RUN_FINISHED');
    expect(first.events.map((e) => e.type)).toContain('TOOL_CALL_END');
    const call = (upstream.requests[0].body as { tools: { function: { name: string } }[] }).tools;
    expect(call.map((t) => t.function.name)).toContain('get_browser_time');

    a.addMessage({ id: 't1', role: 'tool', toolCallId: 'call_time', content: '12:00' });
    const second = await run(a, { tools });
    expect(second.events.some((e) => e.type === EventType.TOOL_CALL_RESULT)).toBe(false);
    expect(second.result).toMatchObject({ runId: first.result.runId, status: 'completed' });
    expect(second.newMessages.find((m) => m.role === 'assistant')).toMatchObject({ content: 'It is noon.' });
    const toolMessage = (
      upstream.requests[1].body as unknown as { messages: Record<string, unknown>[] }
    ).messages.at(-1);
    expect(toolMessage).toMatchObject({ role: 'tool', tool_call_id: 'call_time', content: '12:00' });
  });

  describe('input the session cannot hold is a 400 before anything runs', () => {
    const post = (body: Record<string, unknown>) =>
      fetch(`${app.url}/v1/ag-ui`, {
        method: 'POST',
        headers: { authorization: ALICE, 'content-type': 'application/json' },
        body: JSON.stringify({
          threadId: 'thread-ok',
          runId: 'r1',
          messages: [user('u1', 'Hi.')],
          tools: [],
          context: [],
          ...body,
        }),
      });
    const tool = (name: string) => ({ name, description: 'x', parameters: { type: 'object' } });

    it('refuses a threadId outside 1–200 characters (400, not 500), and takes one of 200', async () => {
      upstream.fallback = text('fine');
      // Random, so PostgreSQL cannot compress it below its index row limit.
      const long = await post({ threadId: randomBytes(4000).toString('hex') });
      expect(long.status).toBe(400);
      expect(((await long.json()) as { message: string }).message).toMatch(/1–200/);
      expect((await post({ threadId: 't'.repeat(201) })).status).toBe(400);
      expect((await post({ threadId: '' })).status).toBe(400);
      expect(upstream.requests).toHaveLength(0);
      const longest = await post({ threadId: 't'.repeat(200) });
      expect(longest.status).toBe(200);
      await longest.text();
    });

    it('refuses input tools named as POST /v1/sessions refuses clientTools: agent.spawn, 300 characters, a server tool', async () => {
      for (const name of ['agent.spawn', 'n'.repeat(300), 'read_file', '']) {
        const res = await post({
          threadId: `thread-bad-tool-${name.length}-${name.slice(0, 5)}`,
          tools: [tool(name)],
        });
        expect(res.status).toBe(400);
        const sessions = await fetch(`${app.url}/v1/sessions`, {
          method: 'POST',
          headers: { authorization: ALICE, 'content-type': 'application/json' },
          body: JSON.stringify({ clientTools: [{ type: 'function', function: tool(name) }] }),
        });
        expect(sessions.status).toBe(400);
      }
      expect(upstream.requests).toHaveLength(0);
    });
  });

  it("streams the thread's waiting run on after its approval, without repeating what the client has, and never a 409 for it", async () => {
    upstream.enqueue(
      toolCalls([
        { id: 'call_ag_read', name: 'read_file', arguments: { path: 'notes.txt' } },
        { id: 'call_ag_write', name: 'write_file', arguments: { path: 'ag-ui.txt', content: 'approved' } },
      ]),
      text('Both done.'),
    );
    const a = agent('thread-approval');
    a.addMessage(user('u1', 'Read the notes and write a file'));
    const first = await run(a);
    expect(first.result).toMatchObject({
      status: 'requires_action',
      pendingToolCalls: [{ toolCallId: 'call_ag_write', waitingFor: 'approval' }],
    });
    // The client kept the calls it was streamed: its messages end with an assistant message.
    expect(a.messages.at(-1)).toMatchObject({ role: 'assistant' });

    // Asked again before anyone decided: the same wait again, not a 409.
    const early = await run(a);
    expect(early.result).toMatchObject({ runId: first.result.runId, status: 'requires_action' });
    expect(early.events.map((e) => e.type)).toEqual(['RUN_STARTED', 'RUN_FINISHED']);

    // A new user message while the run waits is the 409 it is everywhere.
    const busy = await fetch(`${app.url}/v1/ag-ui`, {
      method: 'POST',
      headers: { authorization: ALICE, 'content-type': 'application/json' },
      body: JSON.stringify({
        threadId: 'thread-approval',
        runId: 'client-busy',
        messages: [...a.messages, user('u2', 'Something else')],
        tools: [],
        context: [],
      }),
    });
    expect(busy.status).toBe(409);

    const approval = await fetch(
      `${app.url}/v1/runs/${first.result.runId}/tool-calls/call_ag_write/approval`,
      {
        method: 'POST',
        headers: { authorization: ALICE, 'content-type': 'application/json' },
        body: JSON.stringify({ approve: true }),
      },
    );
    expect(approval.status).toBe(202);
    // The run finishes before the client asks: what it streams is told by the log, not by timing.
    await eventually(async () => {
      const res = await fetch(`${app.url}/v1/runs/${first.result.runId}`, {
        headers: { authorization: ALICE },
      });
      return ((await res.json()) as { status: string }).status === 'completed';
    });

    const rest = await run(a, { runId: 'client-run-after-approval' });
    expect(rest.result).toMatchObject({ runId: first.result.runId, status: 'completed' });
    expect(rest.events[0]).toMatchObject({ type: 'RUN_STARTED', runId: 'client-run-after-approval' });
    // Only what came after the wait: the step's results, then the answer.
    expect(rest.events.filter((e) => e.type === EventType.TOOL_CALL_START)).toHaveLength(0);
    const results = rest.events.filter((e) => e.type === EventType.TOOL_CALL_RESULT) as unknown as {
      toolCallId: string;
    }[];
    // The step's auto read ran once the wait was over: new to the client, like the approved write.
    expect(results.map((r) => r.toolCallId)).toEqual(['call_ag_read', 'call_ag_write']);
    expect(rest.newMessages.find((m) => m.role === 'assistant')).toMatchObject({ content: 'Both done.' });
    expect(readFileSync(join(app.workspace, 'ag-ui.txt'), 'utf8')).toBe('approved');
    expect(upstream.requests).toHaveLength(2);
  });
});
