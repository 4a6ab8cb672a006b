import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { api } from '../support/sse-client';
import { ToolRunner } from '../../src/tools/tool-runner.service';
import type { ToolResult } from '../../src/tools/tool';

/** Issue 39's "done when": a background dev server answers a later command of its session, and is gone after cancel_command. */
describe('a background dev server (e2e, RUN_COMMAND_NETWORK=true)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startApp({
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      ENABLE_RUN_COMMAND: 'true',
      RUN_COMMAND_NETWORK: 'true',
      TOOL_POLICY: 'run_command=allow',
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  function call(sessionId: string, name: string, args: Record<string, unknown>): Promise<ToolResult> {
    return app.app
      .get(ToolRunner)
      .runCall(name, args, { runId: randomUUID(), sessionId, toolCallId: `call-${randomUUID()}` });
  }

  it('answers curl from a later command of the same session until cancel_command stops it', async () => {
    const sessionId = (await api(app.url, 'POST', '/v1/sessions', { mode: 'exec' })).body.id as string;
    const dir = `site-${randomUUID().slice(0, 8)}`;
    mkdirSync(join(app.workspace, dir));
    writeFileSync(join(app.workspace, dir, 'hello.txt'), 'hello from the dev server\n');
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const started = await call(sessionId, 'run_command', {
      command: `python3 -m http.server ${port} --bind 127.0.0.1`,
      cwd: dir,
      background: true,
    });
    expect(started.isError).toBeFalsy();
    const commandId = /commandId ([0-9a-f-]{36})/.exec(started.content)![1];

    const curl = { command: `curl -sS --max-time 5 http://127.0.0.1:${port}/hello.txt`, cwd: dir };
    let answer: ToolResult | undefined;
    await eventually(async () => {
      answer = await call(sessionId, 'run_command', curl);
      return answer.content.includes('exit code 0');
    });
    expect(answer!.content).toContain('hello from the dev server');
    // The server's own log of that request, read back.
    await eventually(async () =>
      (await call(sessionId, 'get_command_output', { commandId, grep: 'GET /hello.txt' })).content.includes(
        '"GET /hello.txt HTTP/1.1" 200',
      ),
    );

    const cancelled = await call(sessionId, 'cancel_command', { commandId });
    expect(cancelled.content).toContain('stopped by a cancel');
    const after = await call(sessionId, 'run_command', curl);
    expect(after.content).not.toContain('exit code 0');
    expect(after.content).not.toContain('hello from the dev server');
  });
});
