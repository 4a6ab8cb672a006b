import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import {
  eventsOfType,
  groupIsRunning,
  isRunning,
  lastToolMessage,
  offeredToolNames,
  oneEvent,
  readPidFile,
  timeline,
  toolCallRecords,
} from '../support/agent-scripts';
import { eventually } from '../support/eventually';
import { api, openStream, type OpenStream, type StreamEvent } from '../support/sse-client';

/** What every server environment has; commands need PATH to find programs. */
const BASE_ENV = {
  PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
  HOME: process.env.HOME ?? '/tmp',
};

/** A folder of its own in the workspace for one test; returns its workspace-relative name. */
function folder(app: TestApp, name: string): string {
  const rel = `${name}-${randomUUID().slice(0, 8)}`;
  mkdirSync(join(app.workspace, rel));
  return rel;
}

async function chat(
  app: TestApp,
  prompt: string,
  options: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<OpenStream> {
  const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt, ...options }, headers });
  expect(stream.status).toBe(200);
  return stream;
}

const outputOf = (events: readonly StreamEvent[], stream?: 'stdout' | 'stderr'): string =>
  eventsOfType(events, 'tool_call_output')
    .filter((e) => stream === undefined || e.data.stream === stream)
    .map((e) => e.data.chunk)
    .join('');

describe('run_command allowed by TOOL_POLICY (e2e)', () => {
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

  it('streams output live as several tool_call_output events before the result, which has the exit code', async () => {
    const dir = folder(app, 'stream');
    const command =
      'echo to-stderr >&2; for i in 1 2 3 4 5; do echo line $i; sleep 0.5; done; touch finished.marker';
    upstream.enqueue(
      toolCalls([{ name: 'run_command', arguments: { command, cwd: dir } }]),
      text('It printed five lines.'),
    );
    const stream = await chat(app, 'print some lines');

    // The first output arrives while the command is still running (it has not reached its last step).
    const head = await stream.until('tool_call_output');
    expect(head.at(-1)!.event).toBe('tool_call_output');
    expect(existsSync(join(app.workspace, dir, 'finished.marker'))).toBe(false);
    const events = [...head, ...(await stream.rest())];

    const start = oneEvent(events, 'tool_call_start');
    const callId = start.data.toolCallId;
    expect(start.data).toMatchObject({ name: 'run_command', arguments: { command, cwd: dir } });
    expect(eventsOfType(events, 'tool_approval_required')).toEqual([]);
    const resultIndex = events.findIndex((e) => e.event === 'tool_call_result');
    const outputs = eventsOfType(events, 'tool_call_output');
    expect(outputs.length).toBeGreaterThanOrEqual(3);
    for (const output of outputs) {
      expect(output.data.toolCallId).toBe(callId);
      expect(events.indexOf(output)).toBeGreaterThan(events.indexOf(start));
      expect(events.indexOf(output)).toBeLessThan(resultIndex);
    }
    expect(outputOf(events, 'stdout')).toBe('line 1\nline 2\nline 3\nline 4\nline 5\n');
    expect(outputOf(events, 'stderr')).toBe('to-stderr\n');

    const result = events[resultIndex].data;
    expect(result).toMatchObject({ toolCallId: callId, name: 'run_command', isError: false });
    expect(result.content).toContain('exit code 0');
    for (let i = 1; i <= 5; i++) expect(result.content).toContain(`line ${i}`);
    expect(result.content).toContain('to-stderr');
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    expect(existsSync(join(app.workspace, dir, 'finished.marker'))).toBe(true);
    expect(lastToolMessage(upstream.requests.at(-1)!)).toEqual({
      role: 'tool',
      tool_call_id: callId,
      content: result.content,
    });
  });

  it('reports a non-zero exit code to the model as a normal result', async () => {
    upstream.enqueue(
      toolCalls([{ name: 'run_command', arguments: { command: 'echo failing; exit 3' } }]),
      text('It failed with 3.'),
    );
    const events = await (await chat(app, 'fail')).rest();
    const result = oneEvent(events, 'tool_call_result').data;
    expect(result.content).toContain('exit code 3');
    expect(result.content).toContain('failing');
    expect(events.at(-1)!.data.status).toBe('completed');
  });

  it('stops a command that exceeds its timeout with a TIMEOUT error, and its whole process group is gone', async () => {
    const dir = folder(app, 'timeout');
    const command = 'echo started; echo $$ > pgid.txt; sleep 60 & echo $! > pid.txt; wait';
    upstream.enqueue(
      toolCalls([{ name: 'run_command', arguments: { command, cwd: dir, timeout_ms: 1000 } }]),
      text('It timed out.'),
    );
    const events = await (await chat(app, 'run something slow')).rest();

    const result = oneEvent(events, 'tool_call_result').data;
    expect(result).toMatchObject({ name: 'run_command', isError: true, errorCode: 'TIMEOUT' });
    expect(result.content).toContain('started');
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    expect(lastToolMessage(upstream.requests.at(-1)!)!.content).toBe(result.content);

    const pid = await readPidFile(join(app.workspace, dir, 'pid.txt'));
    const pgid = await readPidFile(join(app.workspace, dir, 'pgid.txt'));
    // Gone, or at most a zombie waiting for the container's init to reap it (it runs nothing).
    await eventually(() => !isRunning(pid));
    await eventually(() => !groupIsRunning(pgid));
  });

  it('kills a timed-out command that ignores SIGTERM', async () => {
    const dir = folder(app, 'stubborn');
    const command = "trap '' TERM; echo $$ > pgid.txt; sleep 60 & echo $! > pid.txt; wait; wait; wait";
    upstream.enqueue(
      toolCalls([{ name: 'run_command', arguments: { command, cwd: dir, timeout_ms: 1000 } }]),
      text('It was killed.'),
    );
    const events = await (await chat(app, 'ignore the stop signal')).rest();
    expect(oneEvent(events, 'tool_call_result').data).toMatchObject({ isError: true, errorCode: 'TIMEOUT' });
    const pid = await readPidFile(join(app.workspace, dir, 'pid.txt'));
    const pgid = await readPidFile(join(app.workspace, dir, 'pgid.txt'));
    await eventually(() => !isRunning(pid) && !groupIsRunning(pgid));
  });

  it('stops background processes a finished command left behind', async () => {
    const dir = folder(app, 'background');
    upstream.enqueue(
      toolCalls([
        {
          name: 'run_command',
          arguments: { command: 'sleep 60 > /dev/null 2>&1 & echo $! > pid.txt', cwd: dir },
        },
      ]),
      text('Started in the background.'),
    );
    const events = await (await chat(app, 'leave a job behind')).rest();
    const result = oneEvent(events, 'tool_call_result').data;
    expect(result).toMatchObject({ isError: false });
    expect(result.content).toContain('exit code 0');
    const pid = await readPidFile(join(app.workspace, dir, 'pid.txt'));
    await eventually(() => !isRunning(pid));
  });

  it('cancels a run while its command runs: done cancelled, a CANCELLED result, the process gone, the history whole', async () => {
    const dir = folder(app, 'cancel');
    const command = 'echo $$ > pgid.txt; sleep 30 & echo $! > pid.txt; wait';
    upstream.enqueue(
      toolCalls([{ name: 'run_command', arguments: { command, cwd: dir } }]),
      text('never asked for'),
    );
    const before = upstream.requests.length;
    const stream = await chat(app, 'run something long');
    const head = await stream.until('tool_call_start');
    const { runId, sessionId } = head[0].data;
    const callId = head.at(-1)!.data.toolCallId;
    const pid = await readPidFile(join(app.workspace, dir, 'pid.txt'));
    const pgid = await readPidFile(join(app.workspace, dir, 'pgid.txt'));
    expect(isRunning(pid)).toBe(true);

    const cancel = await api(app.url, 'POST', `/v1/runs/${runId}/cancel`);
    expect(cancel.status).toBe(202);
    const events = [...head, ...(await stream.rest())];

    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'cancelled' });
    const result = oneEvent(events, 'tool_call_result', callId).data;
    expect(result).toMatchObject({ name: 'run_command', isError: true, errorCode: 'CANCELLED' });
    await eventually(() => !isRunning(pid) && !groupIsRunning(pgid));
    expect(upstream.requests.length - before).toBe(1);

    expect((await api(app.url, 'GET', `/v1/runs/${runId}`)).body).toMatchObject({ status: 'cancelled' });
    const [record] = await toolCallRecords(app.databaseUrl, runId);
    expect(record).toMatchObject({
      call_id: callId,
      status: 'error',
      is_error: true,
      error_code: 'CANCELLED',
    });
    const session = await api(app.url, 'GET', `/v1/sessions/${sessionId}`);
    const messages = session.body.messages;
    const asking = messages.findIndex((m: any) => m.toolCalls?.some((c: any) => c.id === callId));
    expect(asking).toBeGreaterThan(0);
    expect(messages[asking + 1]).toMatchObject({ role: 'tool', toolCallId: callId, content: result.content });
    expect((await api(app.url, 'POST', `/v1/runs/${runId}/cancel`)).status).toBe(202);

    // The session takes a new prompt afterwards.
    upstream.enqueue(text('Ready again.'));
    const next = await (
      await openStream(`${app.url}/v1/sessions/${sessionId}/messages`, { body: { content: 'still there?' } })
    ).rest();
    expect(next.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    const replay = (upstream.requests.at(-1)!.body as any).messages;
    const toolIndex = replay.findIndex((m: any) => m.role === 'tool' && m.tool_call_id === callId);
    expect(toolIndex).toBeGreaterThan(0);
    expect(replay[toolIndex - 1].tool_calls.map((c: any) => c.id)).toEqual([callId]);
  });
});

describe('the environment a command sees (e2e)', () => {
  const SECRETS = {
    OPENAI_API_KEY: 'sk-secret-test',
    apiKey: 'key-secret-123',
    otherApiKey: 'key-other-456',
    serverSecret: 'server-secret-in-process-env',
    preload: '--require /tmp/evil-preload.js',
    ldPreload: '/tmp/evil-preload.so',
  };
  const auth = { authorization: `Bearer ${SECRETS.apiKey}` };
  let upstream: FakeUpstream;
  let app: TestApp;
  let previousServerSecret: string | undefined;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    previousServerSecret = process.env.SOME_SERVER_SECRET;
    process.env.SOME_SERVER_SECRET = SECRETS.serverSecret;
    app = await startApp({
      ...BASE_ENV,
      OPENAI_BASE_URL: upstream.baseUrl,
      OPENAI_API_KEY: SECRETS.OPENAI_API_KEY,
      API_KEYS: `tester:${SECRETS.apiKey},other:${SECRETS.otherApiKey}`,
      ENABLE_RUN_COMMAND: 'true',
      TOOL_POLICY: 'run_command=allow',
      // The operator lets some names through; the dangerous and secret ones must be dropped anyway.
      RUN_COMMAND_ENV:
        'NODE_OPTIONS,MY_VAR,OPENAI_API_KEY,API_KEYS,DATABASE_URL,LD_PRELOAD,SOME_SERVER_SECRET',
      NODE_OPTIONS: SECRETS.preload,
      LD_PRELOAD: SECRETS.ldPreload,
      MY_VAR: 'my-visible-value',
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    if (previousServerSecret === undefined) delete process.env.SOME_SERVER_SECRET;
    else process.env.SOME_SERVER_SECRET = previousServerSecret;
  });

  it('prints the environment without any secret or start-up hijacking variable', async () => {
    upstream.enqueue(
      toolCalls([{ name: 'run_command', arguments: { command: 'env; echo END-OF-ENV' } }]),
      text('That is the environment.'),
    );
    const stream = await chat(app, 'print the environment', {}, auth);
    const events = await stream.rest();
    const result = oneEvent(events, 'tool_call_result').data;
    expect(result).toMatchObject({ name: 'run_command', isError: false });
    expect(result.content).toContain('END-OF-ENV');
    // The operator's own variable and the basics get through.
    expect(result.content).toContain('MY_VAR=my-visible-value');
    expect(result.content).toMatch(/^PATH=/m);

    const session = await api(app.url, 'GET', `/v1/sessions/${events[0].data.sessionId}`, undefined, auth);
    const everything = [
      result.content,
      outputOf(events),
      JSON.stringify(events),
      JSON.stringify(session.body),
      JSON.stringify(upstream.requests.at(-1)!.body),
    ];
    const forbidden = [
      SECRETS.OPENAI_API_KEY,
      SECRETS.apiKey,
      SECRETS.otherApiKey,
      SECRETS.serverSecret,
      SECRETS.preload,
      SECRETS.ldPreload,
      app.databaseUrl,
      process.env.TEST_DATABASE_URL!,
      'OPENAI_API_KEY',
      'API_KEYS',
      'DATABASE_URL',
      'SOME_SERVER_SECRET',
      'NODE_OPTIONS',
      'LD_PRELOAD',
    ];
    for (const where of everything) {
      for (const secret of forbidden) expect(where).not.toContain(secret);
    }
  });
});

describe('run_command enabled, with the modes deciding (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ ...BASE_ENV, OPENAI_BASE_URL: upstream.baseUrl, ENABLE_RUN_COMMAND: 'true' });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('lists run_command as denied in safe and write mode and needing confirmation in exec mode (the ladder)', async () => {
    const policyIn = async (query: string) =>
      (await api(app.url, 'GET', `/v1/tools${query}`)).body.find((t: any) => t.name === 'run_command')
        ?.policy;
    expect(await policyIn('')).toBe('deny');
    expect(await policyIn('?mode=safe')).toBe('deny');
    expect(await policyIn('?mode=write')).toBe('deny');
    expect(await policyIn('?mode=exec')).toBe('confirm');
  });

  it('refuses run_command in safe mode with PERMISSION_DENIED and never runs it', async () => {
    const dir = folder(app, 'safe');
    upstream.enqueue(
      toolCalls([{ name: 'run_command', arguments: { command: 'touch ran.marker', cwd: dir } }]),
      text('I may not run commands.'),
    );
    const before = upstream.requests.length;
    const events = await (await chat(app, 'run a command')).rest();

    expect(offeredToolNames(upstream.requests[before])).not.toContain('run_command');
    expect(timeline(events)).toEqual([
      'run_started',
      'start:run_command',
      'result:run_command!',
      'step_finished',
      'text',
      'step_finished',
      'done',
    ]);
    expect(eventsOfType(events, 'tool_approval_required')).toEqual([]);
    expect(eventsOfType(events, 'tool_call_output')).toEqual([]);
    expect(oneEvent(events, 'tool_call_result').data).toMatchObject({
      isError: true,
      errorCode: 'PERMISSION_DENIED',
    });
    expect(existsSync(join(app.workspace, dir, 'ran.marker'))).toBe(false);
    expect(events.at(-1)!.data.status).toBe('completed');
  });

  it('asks for approval in exec mode and runs the command once approved, streaming its output', async () => {
    const dir = folder(app, 'approved');
    upstream.enqueue(
      toolCalls([
        { name: 'run_command', arguments: { command: 'echo approved-run; touch ran.marker', cwd: dir } },
      ]),
      text('Ran it.'),
    );
    const stream = await chat(app, 'run a command', { mode: 'exec' });
    const head = await stream.until('tool_approval_required');
    const required = head.at(-1)!.data;
    expect(required.reason).toContain('$ echo approved-run; touch ran.marker');
    expect(existsSync(join(app.workspace, dir, 'ran.marker'))).toBe(false);
    expect((await api(app.url, 'GET', `/v1/runs/${required.runId}`)).body.status).toBe('requires_action');

    const approval = await api(
      app.url,
      'POST',
      `/v1/runs/${required.runId}/tool-calls/${required.toolCallId}/approval`,
      { approve: true },
    );
    expect(approval.status).toBe(202);
    const rest = await stream.rest();
    expect(outputOf(rest, 'stdout')).toBe('approved-run\n');
    const result = oneEvent(rest, 'tool_call_result').data;
    expect(result).toMatchObject({ isError: false });
    expect(result.content).toContain('exit code 0');
    expect(rest.at(-1)!.data.status).toBe('completed');
    expect(existsSync(join(app.workspace, dir, 'ran.marker'))).toBe(true);
  });

  it('still asks for approval in exec mode, and a rejected command does not run', async () => {
    const dir = folder(app, 'exec-rejected');
    upstream.enqueue(
      toolCalls([{ name: 'run_command', arguments: { command: 'touch ran.marker', cwd: dir } }]),
      text('Not run.'),
    );
    const stream = await chat(app, 'run a command', { mode: 'exec' });
    const required = (await stream.until('tool_approval_required')).at(-1)!.data;
    const rejection = await api(
      app.url,
      'POST',
      `/v1/runs/${required.runId}/tool-calls/${required.toolCallId}/approval`,
      { approve: false, reason: 'no commands today' },
    );
    expect(rejection.status).toBe(202);
    const rest = await stream.rest();
    expect(oneEvent(rest, 'tool_call_result').data).toMatchObject({ isError: true, errorCode: 'REJECTED' });
    expect(eventsOfType(rest, 'tool_call_output')).toEqual([]);
    expect(existsSync(join(app.workspace, dir, 'ran.marker'))).toBe(false);
  });
});

describe('run_command without ENABLE_RUN_COMMAND (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    // A policy override alone does not enable the tool.
    app = await startApp({
      ...BASE_ENV,
      OPENAI_BASE_URL: upstream.baseUrl,
      TOOL_POLICY: 'run_command=allow',
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('does not list run_command in GET /v1/tools in any mode', async () => {
    for (const query of ['', '?mode=write', '?mode=exec']) {
      const tools = await api(app.url, 'GET', `/v1/tools${query}`);
      expect(tools.status).toBe(200);
      expect(tools.body.map((t: any) => t.name)).not.toContain('run_command');
      expect(tools.body.map((t: any) => t.name)).toContain('read_file');
    }
  });

  it('answers a run_command call with UNKNOWN_TOOL and runs nothing', async () => {
    const dir = folder(app, 'disabled');
    upstream.enqueue(
      toolCalls([{ name: 'run_command', arguments: { command: 'touch ran.marker', cwd: dir } }]),
      text('No such tool.'),
    );
    const before = upstream.requests.length;
    const events = await (await chat(app, 'run a command', { mode: 'exec' })).rest();
    expect(offeredToolNames(upstream.requests[before])).not.toContain('run_command');
    expect(oneEvent(events, 'tool_call_result').data).toMatchObject({
      isError: true,
      errorCode: 'UNKNOWN_TOOL',
    });
    expect(existsSync(join(app.workspace, dir, 'ran.marker'))).toBe(false);
    expect(events.at(-1)!.data.status).toBe('completed');
  });
});
