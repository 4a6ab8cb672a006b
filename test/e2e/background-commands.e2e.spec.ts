import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import {
  eventsOfType,
  isRunning,
  lastToolMessage,
  offeredToolNames,
  oneEvent,
  readPidFile,
} from '../support/agent-scripts';
import { eventually } from '../support/eventually';
import { api, openStream } from '../support/sse-client';
import { ToolRunner } from '../../src/tools/tool-runner.service';
import type { ToolResult } from '../../src/tools/tool';

/** What every server environment has; commands need PATH to find programs. */
const BASE_ENV = {
  PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
  HOME: process.env.HOME ?? '/tmp',
};

describe('background commands (e2e)', () => {
  // Every test starts sandboxed processes (bubblewrap) that live until they are stopped, and the
  // shutdown waits for each to end: on a loaded 2-core machine that can take most of jest's 30 s.
  jest.setTimeout(90_000);
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      ...BASE_ENV,
      OPENAI_BASE_URL: upstream.baseUrl,
      ENABLE_RUN_COMMAND: 'true',
      TOOL_POLICY: 'run_command=allow',
      RUN_COMMAND_MAX_BACKGROUND: '2',
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  /** A folder of its own in the workspace for one test; its workspace-relative name. */
  function folder(name: string): string {
    const rel = `${name}-${randomUUID().slice(0, 8)}`;
    mkdirSync(join(app.workspace, rel));
    return rel;
  }

  async function session(): Promise<string> {
    const created = await api(app.url, 'POST', '/v1/sessions', { mode: 'exec' });
    expect(created.status).toBe(201);
    return created.body.id as string;
  }

  /** One call of a tool in a session, as a run's step makes it (through the app's own ToolRunner). */
  function call(sessionId: string, name: string, args: Record<string, unknown>): Promise<ToolResult> {
    return app.app
      .get(ToolRunner)
      .runCall(name, args, { runId: randomUUID(), sessionId, toolCallId: `call-${randomUUID()}` });
  }

  async function startBackground(sessionId: string, command: string, cwd?: string): Promise<string> {
    const started = await call(sessionId, 'run_command', { command, cwd, background: true });
    expect(started.isError).toBeFalsy();
    const id = /commandId ([0-9a-f-]{36})/.exec(started.content)?.[1];
    expect(id).toBeDefined();
    return id!;
  }

  async function commandsOf(sessionId: string) {
    const listed = await api(app.url, 'GET', `/v1/sessions/${sessionId}/commands`);
    expect(listed.status).toBe(200);
    return listed.body as {
      commandId: string;
      command: string;
      status: string;
      exitCode: number | null;
      startedAt: string;
      endedAt: string | null;
    }[];
  }

  it('runs in the background past its call and its run, offered with get_command_output and cancel_command, none waiting for approval', async () => {
    const dir = folder('loop');
    const command = 'echo begin; sleep 600';
    upstream.enqueue(
      toolCalls([{ name: 'run_command', arguments: { command, cwd: dir, background: true } }]),
      (request) => {
        const commandId = /commandId ([0-9a-f-]{36})/.exec(String(lastToolMessage(request)?.content))?.[1];
        return toolCalls([{ name: 'get_command_output', arguments: { commandId } }]);
      },
      text('It is running.'),
    );
    // The session's tools name only run_command: its two companions come with it.
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'start a server', mode: 'exec', tools: ['run_command'] },
    });
    expect(stream.status).toBe(200);
    const events = await stream.rest();
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    expect(offeredToolNames(upstream.requests.at(-3)!).sort()).toEqual([
      'cancel_command',
      'get_command_output',
      'run_command',
    ]);
    expect(eventsOfType(events, 'tool_approval_required')).toEqual([]);
    const results = eventsOfType(events, 'tool_call_result');
    expect(results.map((r) => r.data.isError)).toEqual([false, false]);
    const commandId = /commandId ([0-9a-f-]{36})/.exec(results[0].data.content)![1];
    await eventually(async () => {
      const read = await call(stream.headers.get('x-session-id')!, 'get_command_output', { commandId });
      return read.content.includes('begin');
    });
    expect(oneEvent(events, 'tool_call_result', results[1].data.toolCallId).data.content).toContain(
      'Status: running',
    );

    // After the run: still running, and listed over HTTP.
    const sessionId = stream.headers.get('x-session-id')!;
    const listed = await commandsOf(sessionId);
    expect(listed).toEqual([
      { commandId, command, status: 'running', exitCode: null, startedAt: expect.any(String), endedAt: null },
    ]);
    const cancelled = await call(sessionId, 'cancel_command', { commandId });
    expect(cancelled.content).toContain('stopped by a cancel');
  });

  it('reads output that comes over time: the newest tail lines, grep, and since with the offset to go on from', async () => {
    const sessionId = await session();
    const commandId = await startBackground(
      sessionId,
      'i=1; while [ $i -le 6 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); sleep 0.2; done; sleep 600',
    );
    await eventually(async () =>
      (await call(sessionId, 'get_command_output', { commandId })).content.includes('err 2'),
    );
    const first = await call(sessionId, 'get_command_output', { commandId });
    expect(first.content).toContain('Status: running');
    const next = Number(/since=(\d+)/.exec(first.content)![1]);
    expect(next).toBeGreaterThan(0);

    // Later output, from the offset on: none of what was read before.
    await eventually(async () =>
      (await call(sessionId, 'get_command_output', { commandId })).content.includes('err 6'),
    );
    const later = await call(sessionId, 'get_command_output', { commandId, since: next });
    expect(later.content).toContain('out 6\nerr 6');
    expect(later.content).not.toContain('out 1\n');
    // stdout and stderr together, in the order they came.
    const all = await call(sessionId, 'get_command_output', { commandId, since: 0 });
    expect(all.content).toContain('out 1\nerr 1\nout 2\nerr 2\n');

    const tail = await call(sessionId, 'get_command_output', { commandId, tail: 2 });
    expect(tail.content.endsWith('\nout 6\nerr 6')).toBe(true);
    expect(tail.content).not.toContain('out 5');

    const grep = await call(sessionId, 'get_command_output', { commandId, grep: '^err [135]$' });
    expect(grep.content.endsWith('\nerr 1\nerr 3\nerr 5')).toBe(true);
    expect(grep.content).not.toContain('out 1');

    // A pattern a backtracking engine would need and RE2 refuses is an error the model can act on.
    const refused = await call(sessionId, 'get_command_output', { commandId, grep: '(a)\\1' });
    expect(refused).toMatchObject({ isError: true, errorCode: 'INVALID_ARGUMENTS' });
    await call(sessionId, 'cancel_command', { commandId });
  });

  it('cancel_command stops it with everything it started; the list says stopped', async () => {
    const sessionId = await session();
    const dir = folder('cancel');
    const commandId = await startBackground(sessionId, 'sleep 600 & echo $! > pid.txt; wait', dir);
    const pid = await readPidFile(join(app.workspace, dir, 'pid.txt'));
    expect(isRunning(pid)).toBe(true);

    const cancelled = await call(sessionId, 'cancel_command', { commandId });
    expect(cancelled.isError).toBeFalsy();
    expect(cancelled.content).toContain('stopped by a cancel');
    await eventually(() => !isRunning(pid));
    const [listed] = await commandsOf(sessionId);
    expect(listed).toMatchObject({
      commandId,
      status: 'stopped',
      exitCode: null,
      endedAt: expect.any(String),
    });
    const read = await call(sessionId, 'get_command_output', { commandId });
    expect(read.content).toContain('stopped by a cancel');
    // A second cancel has nothing to stop.
    expect((await call(sessionId, 'cancel_command', { commandId })).content).toContain('Nothing to stop');
  });

  it('runs at most RUN_COMMAND_MAX_BACKGROUND per session at once: one more is an error until one ends', async () => {
    const sessionId = await session();
    const first = await startBackground(sessionId, 'sleep 600');
    await startBackground(sessionId, 'sleep 600');
    const third = await call(sessionId, 'run_command', { command: 'sleep 600', background: true });
    expect(third).toMatchObject({ isError: true });
    expect(third.content).toContain('RUN_COMMAND_MAX_BACKGROUND');
    // Another session has its own places.
    await call(await session(), 'run_command', { command: 'true', background: true }).then((r) =>
      expect(r.isError).toBeFalsy(),
    );

    await call(sessionId, 'cancel_command', { commandId: first });
    const now = await startBackground(sessionId, 'sleep 600');
    expect((await commandsOf(sessionId)).map((c) => c.status).sort()).toEqual([
      'running',
      'running',
      'stopped',
    ]);
    for (const c of await commandsOf(sessionId))
      await call(sessionId, 'cancel_command', { commandId: c.commandId });
    expect(now).toBeDefined();
  });

  it("answers another session's commandId as an unknown one, and leaves that command alone", async () => {
    const owner = await session();
    const other = await session();
    const commandId = await startBackground(owner, 'echo secret-output; sleep 600');
    for (const name of ['get_command_output', 'cancel_command']) {
      const result = await call(other, name, { commandId });
      expect(result).toMatchObject({ isError: true, errorCode: 'NOT_FOUND' });
      expect(result.content).toContain('There is no background command');
      expect(result.content).not.toContain('secret-output');
    }
    expect(await commandsOf(other)).toEqual([]);
    // An id that is not even a uuid is just as unknown.
    expect(await call(owner, 'get_command_output', { commandId: 'not-a-command' })).toMatchObject({
      isError: true,
      errorCode: 'NOT_FOUND',
    });
    expect((await commandsOf(owner))[0]).toMatchObject({ commandId, status: 'running' });
    await call(owner, 'cancel_command', { commandId });
  });

  it('ends with its session: deleting the session stops it and its children', async () => {
    const sessionId = await session();
    const dir = folder('delete');
    await startBackground(sessionId, 'sleep 600 & echo $! > pid.txt; wait', dir);
    const pid = await readPidFile(join(app.workspace, dir, 'pid.txt'));
    expect(isRunning(pid)).toBe(true);

    expect((await api(app.url, 'DELETE', `/v1/sessions/${sessionId}`)).status).toBe(204);
    await eventually(() => !isRunning(pid));
    expect((await api(app.url, 'GET', `/v1/sessions/${sessionId}/commands`)).status).toBe(404);
  });

  it('is bounded by RUN_COMMAND_MAX_TIMEOUT_MS, not TOOL_TIMEOUT_MS, or by a smaller timeout_ms, and then stopped by it', async () => {
    const sessionId = await session();
    const long = await call(sessionId, 'run_command', { command: 'sleep 600', background: true });
    expect(long.content).toContain(`time limit ${app.config.runCommandMaxTimeoutMs / 1000} s`);
    const longId = /commandId ([0-9a-f-]{36})/.exec(long.content)![1];

    const short = await call(sessionId, 'run_command', {
      command: 'sleep 600',
      background: true,
      timeout_ms: 1000,
    });
    const commandId = /commandId ([0-9a-f-]{36})/.exec(short.content)![1];
    await eventually(async () =>
      (await commandsOf(sessionId)).some((c) => c.commandId === commandId && c.status === 'stopped'),
    );
    const read = await call(sessionId, 'get_command_output', { commandId });
    expect(read.content).toContain('stopped by its time limit');
    expect((await commandsOf(sessionId)).find((c) => c.commandId === longId)?.status).toBe('running');
    await call(sessionId, 'cancel_command', { commandId: longId });
  });

  it('keeps a bounded output: its start, its newest part, and how much was dropped between', async () => {
    const sessionId = await session();
    // About 3.6 MB: far more than is kept.
    const commandId = await startBackground(
      sessionId,
      'echo FIRST; yes middle-line | head -n 300000; echo LAST',
    );
    await eventually(async () =>
      (await call(sessionId, 'get_command_output', { commandId })).content.includes('exited with code 0'),
    );
    const newest = await call(sessionId, 'get_command_output', { commandId });
    expect(newest.content.endsWith('middle-line\nLAST')).toBe(true);
    expect(Buffer.byteLength(newest.content)).toBeLessThanOrEqual(app.config.readMaxBytes);

    const fromStart = await call(sessionId, 'get_command_output', { commandId, since: 0 });
    expect(fromStart.content).toContain('\nFIRST\nmiddle-line\n');
    expect(Buffer.byteLength(fromStart.content)).toBeLessThanOrEqual(app.config.readMaxBytes);
    // Reading on from each answer's offset crosses the dropped part, named with its size, and reaches the end.
    let since = Number(/since=(\d+)/.exec(fromStart.content)![1]);
    let seen = fromStart.content;
    const total = 'FIRST\n'.length + 300_000 * 'middle-line\n'.length + 'LAST\n'.length;
    let last = fromStart;
    for (let i = 0; i < 20 && since < total; i++) {
      last = await call(sessionId, 'get_command_output', { commandId, since });
      expect(Buffer.byteLength(last.content)).toBeLessThanOrEqual(app.config.readMaxBytes);
      seen += last.content;
      since = Number(/since=(\d+)/.exec(last.content)![1]);
    }
    expect(since).toBe(total);
    expect(last.content.endsWith('middle-line\nLAST\n')).toBe(true);
    const dropped = Number(/\[(\d+) bytes dropped here/.exec(seen)?.[1]);
    expect(dropped).toBeGreaterThan(total - 1024 * 1024);
  });
});
