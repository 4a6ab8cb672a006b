import { Test } from '@nestjs/testing';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { hostPid } from '../support/agent-scripts';
import { eventually } from '../support/eventually';
import { buildCommandEnv } from '../../src/config/command-env';
import { ConfigModule } from '../../src/config/config.module';
import type { AppConfig } from '../../src/config/app-config';
import { RunCommandTool } from '../../src/tools/builtin/run-command.tool';
import { CommandSandbox } from '../../src/tools/exec/command-sandbox.service';
import { BackgroundCommands } from '../../src/tools/exec/background-commands.service';
import { ServerProcess } from '../../src/common/server-process.service';
import type { ToolResult } from '../../src/tools/tool';
import { ToolRunner, type ToolRunContext } from '../../src/tools/tool-runner.service';
import { ToolsModule } from '../../src/tools/tools.module';
import { makeWorkspace, testConfig, type TempWorkspace } from './support/tool-fixtures';

/** The tool as the module builds it: with its sandbox checked the way start-up checks it. */
function toolFor(config: AppConfig): RunCommandTool {
  const sandbox = new CommandSandbox(config);
  sandbox.onModuleInit();
  return new RunCommandTool(config, sandbox, new BackgroundCommands(config, new ServerProcess()));
}

type Chunk = { stream: 'stdout' | 'stderr'; chunk: string; at: number };

/** Alive means running: a killed child may linger as a zombie until something reaps it. */
function isAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

describe('run_command', () => {
  let ws: TempWorkspace;

  beforeAll(async () => {
    ws = await makeWorkspace();
    await mkdir(join(ws.root, 'sub'));
  });
  afterAll(() => ws.cleanup());

  async function runnerFor(
    overrides: Partial<AppConfig> = {},
  ): Promise<{ runner: ToolRunner; config: AppConfig }> {
    const config = testConfig(ws.root, {
      enableRunCommand: true,
      toolTimeoutMs: 5000,
      commandEnv: buildCommandEnv({ PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp' }, []),
      ...overrides,
    });
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(config), ToolsModule],
    }).compile();
    await moduleRef.init();
    return { runner: moduleRef.get(ToolRunner), config };
  }

  function run(
    runner: ToolRunner,
    args: Record<string, unknown>,
    parentSignal?: AbortSignal,
  ): { result: Promise<ToolResult>; output: Chunk[] } {
    const output: Chunk[] = [];
    const ctx: ToolRunContext = {
      runId: 'run-1',
      sessionId: 'session-1',
      toolCallId: 'call-1',
      parentSignal,
      emitOutput: (stream, chunk) => output.push({ stream, chunk, at: Date.now() }),
    };
    return { result: runner.runCall('run_command', args, ctx), output };
  }

  it('reports the exit code and the output', async () => {
    const { runner } = await runnerFor();
    const result = await run(runner, { command: 'echo out; echo err >&2; exit 3' }).result;
    expect(result.isError).toBeUndefined();
    expect(result.content).toMatch(/^\$ echo out; echo err >&2; exit 3\n\(in \.\) exit code 3\n/);
    expect(result.content).toContain('out\n');
    expect(result.content).toContain('err\n');
  });

  it('streams stdout and stderr to the client while the command runs', async () => {
    const { runner } = await runnerFor();
    const { result, output } = run(runner, {
      command: 'for i in 1 2 3; do echo tick $i; sleep 0.3; done; echo oops >&2; touch finished',
    });
    // The first output reaches the client while the command still runs (before it leaves its marker).
    await eventually(() => output.length > 0);
    expect(existsSync(join(ws.root, 'finished'))).toBe(false);
    await result;
    const stdout = output.filter((o) => o.stream === 'stdout');
    expect(stdout.map((o) => o.chunk).join('')).toBe('tick 1\ntick 2\ntick 3\n');
    expect(stdout.length).toBeGreaterThanOrEqual(3);
    expect(
      output
        .filter((o) => o.stream === 'stderr')
        .map((o) => o.chunk)
        .join(''),
    ).toBe('oops\n');
  });

  it('coalesces fast output into a few chunks instead of one event per write', async () => {
    const { runner } = await runnerFor({ toolOutputMaxBytes: 1024 * 1024 });
    const { result, output } = run(runner, { command: 'seq 1 20000' });
    await result;
    const streamed = output.map((o) => o.chunk).join('');
    expect(streamed.split('\n').length).toBe(20001);
    expect(output.length).toBeLessThan(60);
    expect(output.every((o) => Buffer.byteLength(o.chunk) <= 16 * 1024 + 64 * 1024)).toBe(true);
  });

  it('keeps the head and the tail of long output and marks the cut', async () => {
    const { runner } = await runnerFor({ toolOutputMaxBytes: 4096 });
    const result = await run(runner, { command: 'seq 1 100000' }).result;
    expect(Buffer.byteLength(result.content)).toBeLessThanOrEqual(4096);
    expect(result.content).toMatch(/exit code 0\n1\n2\n3\n/);
    expect(result.content).toMatch(/\[truncated: \d+ of 588895 bytes omitted from the middle\]/);
    expect(result.content.endsWith('99999\n100000\n')).toBe(true);
    expect(result.truncated).toBe(true);
  });

  it('kills the whole process group on timeout, children included', async () => {
    const { runner } = await runnerFor({ toolTimeoutMs: 700 });
    const { result, output } = run(runner, { command: 'sleep 30 & echo $!; wait' });
    const outcome = await result;
    expect(outcome).toMatchObject({ isError: true, errorCode: 'TIMEOUT' });
    expect(outcome.content).toMatch(/did not finish within 0\.7 s/);
    const seen = Number(
      output
        .map((o) => o.chunk)
        .join('')
        .trim(),
    );
    expect(seen).toBeGreaterThan(0);
    // The sandbox numbers its processes itself: ask the host about the one working in the workspace.
    await eventually(() => !isAlive(hostPid(seen, ws.root)));
  });

  it('uses the longer timeout a call asks for, up to RUN_COMMAND_MAX_TIMEOUT_MS', async () => {
    const tool = toolFor(testConfig(ws.root, { runCommandMaxTimeoutMs: 60_000 }));
    const config = testConfig(ws.root, { toolTimeoutMs: 30_000, runCommandMaxTimeoutMs: 60_000 });
    expect(tool.timeoutMs({ command: 'x' }, config)).toBe(30_000);
    expect(tool.timeoutMs({ command: 'x', timeout_ms: 45_000 }, config)).toBe(45_000);
    expect(tool.timeoutMs({ command: 'x', timeout_ms: 600_000 }, config)).toBe(60_000);
  });

  it('refuses a timeout above RUN_COMMAND_MAX_TIMEOUT_MS in the schema', async () => {
    const { runner } = await runnerFor({ runCommandMaxTimeoutMs: 10_000 });
    const result = await run(runner, { command: 'true', timeout_ms: 20_000 }).result;
    expect(result).toMatchObject({ errorCode: 'INVALID_ARGUMENTS' });
    expect(result.content).toMatch(/timeout_ms: must be <= 10000/);
  });

  it('kills the command and its children when the run is cancelled', async () => {
    const { runner } = await runnerFor();
    const cancel = new AbortController();
    const { result, output } = run(runner, { command: 'sleep 30 & echo $!; wait' }, cancel.signal);
    await eventually(() => output.length > 0);
    const child = hostPid(
      Number(
        output
          .map((o) => o.chunk)
          .join('')
          .trim(),
      ),
      ws.root,
    );
    expect(isAlive(child)).toBe(true);
    cancel.abort();
    expect(await result).toMatchObject({ isError: true, errorCode: 'CANCELLED' });
    await eventually(() => !isAlive(child));
  });

  it('stops background processes the command leaves behind', async () => {
    const { runner } = await runnerFor();
    // Were the finished command to wait for its background job, this would take 30 s (and time out).
    const { result } = run(runner, { command: 'sleep 30 & echo $!' });
    const outcome = await result;
    const seen = Number(/exit code 0\n(\d+)/.exec(outcome.content)?.[1]);
    expect(seen).toBeGreaterThan(0);
    await eventually(() => !isAlive(hostPid(seen, ws.root)));
  });

  it('never passes the server’s secrets or start-up hijackers to the command', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      OPENAI_API_KEY: 'sk-server-secret',
      DATABASE_URL: 'postgres://u:dbpass@h/db',
      API_KEYS: 'me:apikey-secret',
      NODE_OPTIONS: '--require /tmp/evil.js',
    });
    try {
      const serverEnv = {
        ...process.env,
        LD_PRELOAD: '/tmp/evil.so',
        PROJECT_FLAG: 'on',
        PATH: '/usr/bin:/bin',
      };
      const commandEnv = buildCommandEnv(serverEnv, [
        'NODE_OPTIONS',
        'LD_PRELOAD',
        'OPENAI_API_KEY',
        'PROJECT_FLAG',
      ]);
      const { runner } = await runnerFor({ commandEnv });
      const { content } = await run(runner, { command: 'env' }).result;
      expect(content).toContain('PROJECT_FLAG=on');
      expect(content).toContain('PATH=/usr/bin:/bin');
      for (const secret of [
        'sk-server-secret',
        'dbpass',
        'apikey-secret',
        'NODE_OPTIONS',
        'LD_PRELOAD',
        'evil',
      ]) {
        expect(content).not.toContain(secret);
      }
    } finally {
      process.env = saved;
    }
  });

  it('runs in the requested folder inside the workspace', async () => {
    const { runner } = await runnerFor();
    const { content } = await run(runner, { command: 'pwd', cwd: 'sub' }).result;
    expect(content).toContain(`${join(ws.root, 'sub')}\n`);
  });

  it('refuses a folder outside the workspace', async () => {
    const { runner } = await runnerFor();
    expect(await run(runner, { command: 'pwd', cwd: '..' }).result).toMatchObject({
      isError: true,
      errorCode: 'PERMISSION_DENIED',
    });
  });

  it('runs at most RUN_COMMAND_MAX_CONCURRENT commands at once', async () => {
    const { runner } = await runnerFor({ runCommandMaxConcurrent: 1 });
    const first = run(runner, { command: 'echo holding; sleep 0.4; echo first >> order.txt' });
    await eventually(() => first.output.some((o) => o.chunk.includes('holding')));
    const second = run(runner, { command: 'echo second >> order.txt' });
    await Promise.all([first.result, second.result]);
    // The second had to wait for the only slot, however fast it would have been on its own.
    expect(readFileSync(join(ws.root, 'order.txt'), 'utf8')).toBe('first\nsecond\n');
  });

  it('stops waiting for a slot when the run is cancelled', async () => {
    const { runner } = await runnerFor({ runCommandMaxConcurrent: 1 });
    const holder = new AbortController();
    const first = run(runner, { command: 'echo holding; sleep 30' }, holder.signal);
    // Only once the first command runs (and so holds the only slot) does the second ask for one.
    await eventually(() => first.output.some((o) => o.chunk.includes('holding')));
    const cancel = new AbortController();
    const waiting = run(runner, { command: 'echo never' }, cancel.signal);
    cancel.abort();
    expect(await waiting.result).toMatchObject({ errorCode: 'CANCELLED' });
    expect(waiting.output).toEqual([]);
    holder.abort();
    expect(await first.result).toMatchObject({ errorCode: 'CANCELLED' });
  });

  it('is only enabled with ENABLE_RUN_COMMAND', () => {
    const tool = toolFor(testConfig(ws.root, { enableRunCommand: true }));
    expect(tool.isEnabled(testConfig(ws.root))).toBe(false);
    expect(tool.isEnabled(testConfig(ws.root, { enableRunCommand: true }))).toBe(true);
    expect(tool.kind).toBe('exec');
  });

  it('shows the command line and folder to the person approving', async () => {
    const config = testConfig(ws.root);
    const tool = toolFor(config);
    expect(await tool.describeForApproval({ command: 'npm test', cwd: 'sub' }, { config })).toBe(
      'Run in sub (time limit 30 s):\n$ npm test',
    );
  });
});
