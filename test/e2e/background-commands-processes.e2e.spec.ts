import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startApp, type TestApp } from '../support/app';
import { isRunning, readPidFile } from '../support/agent-scripts';
import { connect, createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { api } from '../support/sse-client';
import { ToolRunner } from '../../src/tools/tool-runner.service';
import type { ToolResult } from '../../src/tools/tool';

const ENV = {
  PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
  HOME: process.env.HOME ?? '/tmp',
  ENABLE_RUN_COMMAND: 'true',
  TOOL_POLICY: 'run_command=allow',
  // Leases renewed every ~300 ms: a change made on another process arrives within a second.
  RUN_LEASE_MS: '1000',
};

function call(
  app: TestApp,
  sessionId: string,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolResult> {
  return app.app
    .get(ToolRunner)
    .runCall(name, args, { runId: randomUUID(), sessionId, toolCallId: `call-${randomUUID()}` });
}

/** A command does not outlive its server process; the durable list keeps it, and says so. */
describe('background commands and their server process (e2e)', () => {
  let databaseUrl: string;
  let workspace: string;
  const apps: TestApp[] = [];

  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
  });
  afterAll(async () => {
    for (const app of apps) await app.close().catch(() => undefined);
  });

  async function start(): Promise<TestApp> {
    const app = await startApp(
      workspace === undefined ? ENV : { ...ENV, WORKSPACE_ROOT: workspace },
      databaseUrl,
    );
    workspace = app.workspace;
    apps.push(app);
    return app;
  }

  it("ends with its process's shutdown: listed as stopped afterwards, and reading it says its output went with its process", async () => {
    const first = await start();
    const sessionId = (await api(first.url, 'POST', '/v1/sessions', { mode: 'exec' })).body.id as string;
    const dir = `shutdown-${randomUUID().slice(0, 8)}`;
    mkdirSync(join(first.workspace, dir));
    const started = await call(first, sessionId, 'run_command', {
      command: 'sleep 600 & echo $! > pid.txt; wait',
      cwd: dir,
      background: true,
    });
    const commandId = /commandId ([0-9a-f-]{36})/.exec(started.content)![1];
    const pid = await readPidFile(join(first.workspace, dir, 'pid.txt'));

    await first.close();
    expect(isRunning(pid)).toBe(false);
    // Written down by the shutdown itself, not only read so once its lease lapses.
    const db = await connect(databaseUrl);
    try {
      const { rows } = await db.query('SELECT status, stop_reason FROM background_commands WHERE id = $1', [
        commandId,
      ]);
      expect(rows).toEqual([{ status: 'stopped', stop_reason: 'process' }]);
    } finally {
      await db.end();
    }

    const second = await start();
    const listed = await api(second.url, 'GET', `/v1/sessions/${sessionId}/commands`);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      expect.objectContaining({ commandId, status: 'stopped', exitCode: null, endedAt: expect.any(String) }),
    ]);
    const read = await call(second, sessionId, 'get_command_output', { commandId });
    expect(read).toMatchObject({ isError: true });
    expect(read.content).toContain('stopped by the end of its server process');
    expect(read.content).toContain('no longer kept');
  });

  it('is cancelled from another process through its row, and ends there at its next renewal; its output is read only where it runs', async () => {
    const running = await start();
    const other = await start();
    const sessionId = (await api(running.url, 'POST', '/v1/sessions', { mode: 'exec' })).body.id as string;
    const dir = `elsewhere-${randomUUID().slice(0, 8)}`;
    mkdirSync(join(running.workspace, dir));
    const started = await call(running, sessionId, 'run_command', {
      command: 'echo here; sleep 600 & echo $! > pid.txt; wait',
      cwd: dir,
      background: true,
    });
    const commandId = /commandId ([0-9a-f-]{36})/.exec(started.content)![1];
    const pid = await readPidFile(join(running.workspace, dir, 'pid.txt'));

    const read = await call(other, sessionId, 'get_command_output', { commandId });
    expect(read).toMatchObject({ isError: true });
    expect(read.content).toContain('running in another server process');

    const cancelled = await call(other, sessionId, 'cancel_command', { commandId });
    expect(cancelled.content).toContain('stopped by a cancel');
    await eventually(() => !isRunning(pid));
    // Its process learns of the cancel at its next renewal, and records the end just after the kill.
    let there = await call(running, sessionId, 'get_command_output', { commandId });
    await eventually(async () => {
      there = await call(running, sessionId, 'get_command_output', { commandId });
      return !there.content.includes('Status: running');
    });
    expect(there.content).toContain('stopped by a cancel');
    expect(there.content).toContain('here');
  });

  it('marks stopped, at start-up, a command whose process was lost (its lease lapsed)', async () => {
    const app = apps.at(-1)!;
    const sessionId = (await api(app.url, 'POST', '/v1/sessions', { mode: 'exec' })).body.id as string;
    const commandId = randomUUID();
    const db = await connect(databaseUrl);
    try {
      // What a process killed with SIGKILL leaves: a running row whose lease nobody renews.
      await db.query(
        `INSERT INTO background_commands (id, session_id, owner, command, process_id, lease_expires_at)
         SELECT $1, id, owner, 'npm run dev', $2, now() - interval '1 minute' FROM sessions WHERE id = $3`,
        [commandId, randomUUID(), sessionId],
      );
      const listed = await api(app.url, 'GET', `/v1/sessions/${sessionId}/commands`);
      expect(listed.body).toEqual([
        expect.objectContaining({ commandId, command: 'npm run dev', status: 'stopped', exitCode: null }),
      ]);
      // Nor can the lost command be counted against the session's places, or cancelled again.
      expect((await call(app, sessionId, 'cancel_command', { commandId })).content).toContain(
        'Nothing to stop',
      );

      await start();
      const { rows } = await db.query<{ status: string; stop_reason: string }>(
        'SELECT status, stop_reason FROM background_commands WHERE id = $1',
        [commandId],
      );
      expect(rows).toEqual([{ status: 'stopped', stop_reason: 'process' }]);
    } finally {
      await db.end();
    }
  });
});
