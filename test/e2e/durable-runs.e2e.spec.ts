import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeUpstream, hang, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { connect } from '../support/database';
import { eventually } from '../support/eventually';
import { api, openStream, type OpenStream, type StreamEvent } from '../support/sse-client';

const ofType = (events: StreamEvent[], type: string) =>
  events.filter((e) => e.event === type).map((e) => e.data);

describe('durable runs with people and clients in the loop (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      APPROVAL_TIMEOUT_MS: '1500',
      ENABLE_RUN_COMMAND: 'true',
      TOOL_POLICY: 'run_command=allow',
    });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  async function waitingForApproval(
    prompt: string,
    file = 'note.txt',
  ): Promise<{ stream: OpenStream; runId: string; callId: string; seen: StreamEvent[] }> {
    upstream.enqueue(
      toolCalls([{ name: 'write_file', arguments: { path: file, content: 'hello\n' } }]),
      text('Written.'),
    );
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt } });
    const seen = await stream.until('tool_approval_required');
    const required = seen.at(-1)!.data;
    return { stream, runId: required.runId, callId: required.toolCallId, seen };
  }

  it('waits in requires_action until a person approves, then runs the call and finishes', async () => {
    const { stream, runId, callId, seen } = await waitingForApproval('Write a note.', 'approved.txt');
    expect(seen.map((e) => e.event).slice(-2)).toEqual(['tool_call_start', 'tool_approval_required']);
    expect(seen.at(-1)!.data.reason).toContain('write_file');

    const run = await api(app.url, 'GET', `/v1/runs/${runId}`);
    expect(run.body.status).toBe('requires_action');
    expect(run.body.pendingToolCalls).toEqual([
      expect.objectContaining({
        toolCallId: callId,
        name: 'write_file',
        waitingFor: 'approval',
        executor: 'server',
      }),
    ]);

    expect(
      (await api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/${callId}/approval`, { approve: true }))
        .status,
    ).toBe(202);
    const rest = await stream.rest();
    expect(rest.map((e) => e.event)).toEqual(expect.arrayContaining(['tool_call_result', 'done']));
    expect(ofType(rest, 'tool_call_result')[0]).toMatchObject({ toolCallId: callId, isError: false });
    expect(rest.at(-1)!.data.status).toBe('completed');
    expect(readFileSync(join(app.workspace, 'approved.txt'), 'utf8')).toBe('hello\n');
    // The same call cannot be decided twice.
    const again = await api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/${callId}/approval`, {
      approve: false,
    });
    expect(again.status).toBe(409);
  });

  it('feeds a rejection with its reason to the model and runs nothing', async () => {
    const { stream, runId, callId } = await waitingForApproval('Write a note.', 'rejected.txt');
    await api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/${callId}/approval`, {
      approve: false,
      reason: 'not today',
    });
    const rest = await stream.rest();
    const result = ofType(rest, 'tool_call_result')[0];
    expect(result).toMatchObject({ isError: true, errorCode: 'REJECTED' });
    expect(result.content).toContain('not today');
    expect(existsSync(join(app.workspace, 'rejected.txt'))).toBe(false);
    expect((upstream.requests[1].body as any).messages.at(-1)).toMatchObject({
      role: 'tool',
      content: result.content,
    });
  });

  it('settles an approval nobody gives as expired after APPROVAL_TIMEOUT_MS, and 409s a late decision', async () => {
    const { stream, runId, callId } = await waitingForApproval('Write a note.', 'expired.txt');
    const rest = await stream.rest(10_000);
    expect(ofType(rest, 'tool_call_result')[0]).toMatchObject({
      toolCallId: callId,
      isError: true,
      errorCode: 'EXPIRED',
    });
    expect(rest.at(-1)!.data.status).toBe('completed');
    const late = await api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/${callId}/approval`, {
      approve: true,
    });
    expect(late.status).toBe(409);
    expect(existsSync(join(app.workspace, 'expired.txt'))).toBe(false);
  });

  it('hands client tools to the client and feeds its result to the model', async () => {
    upstream.enqueue(
      toolCalls([{ id: 'call_loc', name: 'get_location', arguments: { precise: true } }]),
      text('You are in Paris.'),
    );
    const clientTools = [
      {
        type: 'function',
        function: {
          name: 'get_location',
          description: "The user's location",
          parameters: { type: 'object', properties: { precise: { type: 'boolean' } }, required: ['precise'] },
        },
      },
    ];
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Where am I?', clientTools } });
    const seen = await stream.until('tool_call_start');
    const start = seen.at(-1)!.data;
    expect(start).toMatchObject({
      toolCallId: 'call_loc',
      name: 'get_location',
      executor: 'client',
      arguments: { precise: true },
    });
    // The store is not behind the stream: the run already waits.
    expect((await api(app.url, 'GET', `/v1/runs/${start.runId}`)).body.status).toBe('requires_action');
    expect((upstream.requests[0].body as any).tools.map((t: any) => t.function.name)).toContain(
      'get_location',
    );

    const posted = await api(app.url, 'POST', `/v1/runs/${start.runId}/tool-calls/call_loc/result`, {
      content: 'Paris, France',
    });
    expect(posted.status).toBe(202);
    const rest = await stream.rest();
    expect(ofType(rest, 'tool_call_result')[0]).toMatchObject({
      toolCallId: 'call_loc',
      content: 'Paris, France',
      isError: false,
    });
    expect(rest.at(-1)!.data.status).toBe('completed');
    expect((upstream.requests[1].body as any).messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_loc',
      content: 'Paris, France',
    });
    const twice = await api(app.url, 'POST', `/v1/runs/${start.runId}/tool-calls/call_loc/result`, {
      content: 'again',
    });
    expect(twice.status).toBe(409);
  });

  it('expires a client call nobody answers', async () => {
    upstream.enqueue(
      toolCalls([{ id: 'call_slow', name: 'ask_user', arguments: {} }]),
      text('No answer then.'),
    );
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'Ask.', clientTools: [{ type: 'function', function: { name: 'ask_user' } }] },
    });
    const rest = await stream.rest(10_000);
    expect(ofType(rest, 'tool_call_result')[0]).toMatchObject({
      toolCallId: 'call_slow',
      isError: true,
      errorCode: 'EXPIRED',
    });
    expect(rest.at(-1)!.data.status).toBe('completed');
  });

  it('rejects client tools that clash with a server tool', async () => {
    const res = await api(app.url, 'POST', '/v1/sessions', {
      clientTools: [{ type: 'function', function: { name: 'read_file' } }],
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.message)).toContain('read_file');
  });

  it('resumes from Last-Event-ID without gaps or repeats, and serves two followers at once', async () => {
    upstream.enqueue(text('one two three four five six seven eight nine ten', { delayMs: 30 }));
    const first = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Count.', tools: [] } });
    const head = await first.until((e) => e.id >= 4);
    first.close();
    const runId = head[0].data.runId;

    const resumed = await openStream(`${app.url}/v1/runs/${runId}/events`, {
      headers: { 'Last-Event-ID': String(head.at(-1)!.id) },
    });
    const viaQuery = await openStream(`${app.url}/v1/runs/${runId}/events?after=2`);
    const tail = await resumed.rest();
    const other = await viaQuery.rest();

    const ids = [...head, ...tail].map((e) => e.id);
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    expect(tail.at(-1)!.event).toBe('done');
    expect(other.map((e) => e.id)).toEqual(ids.slice(2));
    const answer = [...head, ...tail]
      .filter((e) => e.event === 'text')
      .map((e) => e.data.delta)
      .join('');
    expect(answer).toBe('one two three four five six seven eight nine ten');

    // After the end, a replay is the stored log.
    const replay = await (await openStream(`${app.url}/v1/runs/${runId}/events`)).rest();
    expect(replay.map((e) => e.data)).toEqual([...head, ...tail].map((e) => e.data));
    // A client that already has the end gets a 204 (EventSource stops reconnecting), not a stream that hangs.
    const caughtUp = await fetch(`${app.url}/v1/runs/${runId}/events`, {
      headers: { 'Last-Event-ID': String(ids.length) },
    });
    expect(caughtUp.status).toBe(204);
    expect(await caughtUp.text()).toBe('');
  });

  it('cancels while the model streams: partial text kept, upstream aborted, done cancelled', async () => {
    upstream.enqueue(text('alpha beta gamma delta epsilon zeta eta theta iota kappa', { delayMs: 50 }));
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Talk.', tools: [] } });
    const seen = await stream.until((e) => e.event === 'text' && e.data.seq >= 4);
    const runId = seen[0].data.runId;
    expect((await api(app.url, 'POST', `/v1/runs/${runId}/cancel`)).status).toBe(202);
    const rest = await stream.rest();
    expect(rest.at(-1)!.data).toMatchObject({ type: 'done', status: 'cancelled' });
    await eventually(() => upstream.requests[0].aborted);
    expect((await api(app.url, 'POST', `/v1/runs/${runId}/cancel`)).status).toBe(202);

    const run = await api(app.url, 'GET', `/v1/runs/${runId}`);
    expect(run.body.status).toBe('cancelled');
    const session = await api(app.url, 'GET', `/v1/sessions/${seen[0].data.sessionId}`);
    const streamed = [...seen, ...rest]
      .filter((e) => e.event === 'text')
      .map((e) => e.data.delta)
      .join('');
    expect(session.body.messages.at(-1)).toMatchObject({ role: 'assistant', content: streamed });
    expect(rest.at(-1)!.data.messageId).toBe(session.body.messages.at(-1).id);
  });

  it('cancels while a tool runs: the tool is aborted and its call gets a cancelled result', async () => {
    upstream.enqueue(
      toolCalls([
        { id: 'call_sleep', name: 'run_command', arguments: { command: 'echo running; sleep 30' } },
      ]),
    );
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Wait.', mode: 'exec' } });
    const seen = await stream.until('tool_call_start');
    const runId = seen[0].data.runId;
    // The command runs (its first output has arrived): cancel it there.
    await stream.until('tool_call_output');
    await api(app.url, 'POST', `/v1/runs/${runId}/cancel`);
    const rest = await stream.rest();
    expect(ofType(rest, 'tool_call_result')[0]).toMatchObject({
      toolCallId: 'call_sleep',
      isError: true,
      errorCode: 'CANCELLED',
    });
    expect(rest.at(-1)!.data.status).toBe('cancelled');
    const session = await api(app.url, 'GET', `/v1/sessions/${seen[0].data.sessionId}`);
    expect(session.body.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.toolCallId)).toEqual(
      ['call_sleep'],
    );
  });

  it('cancels a run waiting for approval and answers its call, so the next prompt works', async () => {
    const { stream, runId, callId, seen } = await waitingForApproval('Write.', 'never.txt');
    await api(app.url, 'POST', `/v1/runs/${runId}/cancel`);
    const rest = await stream.rest();
    expect(ofType(rest, 'tool_call_result')[0]).toMatchObject({ toolCallId: callId, errorCode: 'CANCELLED' });
    expect(rest.at(-1)!.data.status).toBe('cancelled');

    upstream.enqueue(text('Fresh start.'));
    const next = await (
      await openStream(`${app.url}/v1/sessions/${seen[0].data.sessionId}/messages`, {
        body: { content: 'Again?' },
      })
    ).rest();
    expect(next.at(-1)!.data.status).toBe('completed');
    const messages = (upstream.requests.at(-1)!.body as any).messages;
    const toolMessage = messages.find((m: any) => m.role === 'tool');
    expect(toolMessage.tool_call_id).toBe(callId);
  });

  it('never cancels a run waiting in requires_action when its stream closes, even with ON_DISCONNECT=cancel', async () => {
    const other = await startApp(
      { OPENAI_BASE_URL: upstream.baseUrl, ON_DISCONNECT: 'cancel' },
      app.databaseUrl,
    );
    try {
      upstream.enqueue(
        toolCalls([{ name: 'write_file', arguments: { path: 'kept.txt', content: 'x' } }]),
        text('ok'),
      );
      const stream = await openStream(`${other.url}/v1/chat`, { body: { prompt: 'Write.' } });
      const seen = await stream.until('tool_approval_required');
      stream.close();
      // The positive signal that the close had its chance: the server counts no open stream, and it
      // hands the close to the runs (ON_DISCONNECT) in the same tick it stops counting it.
      await eventually(async () =>
        /^loopwright_open_streams 0$/m.test(String((await api(other.url, 'GET', '/metrics')).body)),
      );
      const runId = seen[0].data.runId;
      expect((await api(other.url, 'GET', `/v1/runs/${runId}`)).body.status).toBe('requires_action');
      await api(other.url, 'POST', `/v1/runs/${runId}/tool-calls/${seen.at(-1)!.data.toolCallId}/approval`, {
        approve: true,
      });
      await eventually(
        async () => (await api(other.url, 'GET', `/v1/runs/${runId}`)).body.status === 'completed',
      );
    } finally {
      await other.close();
    }
  });

  it('refuses to delete a session while it has an active run, and deletes everything once it ended', async () => {
    const { stream, runId, seen } = await waitingForApproval('Write.', 'deleted.txt');
    const sessionId = seen[0].data.sessionId;
    const busy = await api(app.url, 'DELETE', `/v1/sessions/${sessionId}`);
    expect(busy.status).toBe(409);
    expect(busy.body.runId).toBe(runId);

    await api(app.url, 'POST', `/v1/runs/${runId}/cancel`);
    await stream.rest();
    expect((await api(app.url, 'DELETE', `/v1/sessions/${sessionId}`)).status).toBe(204);
    expect((await api(app.url, 'GET', `/v1/sessions/${sessionId}`)).status).toBe(404);
    expect((await api(app.url, 'GET', `/v1/runs/${runId}`)).status).toBe(404);
    expect((await api(app.url, 'DELETE', `/v1/sessions/${sessionId}`)).status).toBe(404);
    const db = await connect(app.databaseUrl);
    try {
      const left = await db.query('SELECT count(*)::int AS n FROM run_events WHERE run_id = $1', [runId]);
      expect(left.rows[0].n).toBe(0);
    } finally {
      await db.end();
    }
  });

  it('keeps a waiting stream open with a ping comment after SSE_PING_MS without an event', async () => {
    const patient = await startApp(
      { OPENAI_BASE_URL: upstream.baseUrl, APPROVAL_TIMEOUT_MS: '60000', SSE_PING_MS: '1000' },
      app.databaseUrl,
    );
    try {
      upstream.enqueue(
        toolCalls([{ name: 'write_file', arguments: { path: 'pinged.txt', content: 'x' } }]),
        text('ok'),
      );
      const stream = await openStream(`${patient.url}/v1/chat`, {
        body: { prompt: 'Write, decided slowly.' },
      });
      const seen = await stream.until('tool_approval_required');
      await stream.until('step_finished');
      // Nothing happens on the run: only the keep-alive comment arrives.
      await eventually(() => stream.comments.includes('ping'));
      const { runId, toolCallId } = seen.at(-1)!.data;
      await api(patient.url, 'POST', `/v1/runs/${runId}/tool-calls/${toolCallId}/approval`, {
        approve: false,
      });
      expect((await stream.rest()).at(-1)!.data.status).toBe('completed');
    } finally {
      await patient.close();
    }
  }, 40_000);

  it('stores every event of a run in its log, in order', async () => {
    upstream.enqueue(toolCalls([{ name: 'list_directory', arguments: {} }]), text('Listed.'));
    const events = await (await openStream(`${app.url}/v1/chat`, { body: { prompt: 'List.' } })).rest();
    const db = await connect(app.databaseUrl);
    try {
      const { rows } = await db.query(
        'SELECT seq, type, payload FROM run_events WHERE run_id = $1 ORDER BY seq',
        [events[0].data.runId],
      );
      expect(rows.map((r) => [r.seq, r.type])).toEqual(events.map((e) => [e.id, e.event]));
      expect(rows.map((r) => r.payload)).toEqual(events.map((e) => e.data));
    } finally {
      await db.end();
    }
  });

  it('aborts the model request when a run is cancelled before the upstream answers', async () => {
    upstream.enqueue(hang());
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Hang.', tools: [] } });
    const [started] = await stream.until('run_started');
    await eventually(() => upstream.requests.length === 1);
    await api(app.url, 'POST', `/v1/runs/${started.data.runId}/cancel`);
    const rest = await stream.rest();
    expect(rest.at(-1)!.data.status).toBe('cancelled');
    await eventually(() => upstream.requests[0].aborted);
  });
});
