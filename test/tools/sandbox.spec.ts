import { Test } from '@nestjs/testing';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildCommandEnv } from '../../src/config/command-env';
import { detectControlGroups } from '../../src/tools/exec/control-groups';
import { ConfigModule } from '../../src/config/config.module';
import type { AppConfig } from '../../src/config/app-config';
import type { ToolResult } from '../../src/tools/tool';
import { RunCommandTool } from '../../src/tools/builtin/run-command.tool';
import { CommandSandbox } from '../../src/tools/exec/command-sandbox.service';
import { BackgroundCommands } from '../../src/tools/exec/background-commands.service';
import { ServerProcess } from '../../src/common/server-process.service';
import { ToolRunner } from '../../src/tools/tool-runner.service';
import { ToolsModule } from '../../src/tools/tools.module';
import { eventually } from '../support/eventually';
import { makeWorkspace, testConfig, type TempWorkspace } from './support/tool-fixtures';

/**
 * Every escape a command had, closed: through the real tool, its bubblewrap sandbox and its limits.
 * Without bubblewrap on the machine these tests are skipped, saying so.
 */

const bwrap = spawnSync('bwrap', ['--version'], { encoding: 'utf8' });
const haveBwrap = bwrap.status === 0;
if (!haveBwrap) console.warn('skipped: the sandbox tests need bubblewrap (apt-get install bubblewrap)');
/** Limits of a whole process tree need control groups; rlimits alone (the fallback) cannot bound root's processes. */
const groups = haveBwrap ? detectControlGroups() : null;
const haveGroups = groups !== null && groups.kind !== 'none';
if (groups?.kind === 'none') {
  console.warn(
    `skipped: the memory and process-count tests need a control group for each command: ${groups.why}`,
  );
}
/** A cgroup v2 hierarchy that offers the memory and pids controllers (absent on cgroup v1 and hybrid hosts). */
const V2_CONTROLLERS = [
  '/sys/fs/cgroup/cgroup.controllers',
  '/sys/fs/cgroup/unified/cgroup.controllers',
].some(
  (file) =>
    existsSync(file) &&
    /\bmemory\b/.test(readFileSync(file, 'utf8')) &&
    /\bpids\b/.test(readFileSync(file, 'utf8')),
);
if (haveBwrap && !V2_CONTROLLERS) {
  console.warn(
    'skipped: the cgroup v2 test needs a cgroup v2 hierarchy with the memory and pids controllers (this host has none)',
  );
}

/** Host processes whose command line contains `marker` (zombies aside). */
function hostProcesses(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (cmdline.includes(marker) && state !== 'Z') found.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return found;
}

(haveBwrap ? describe : describe.skip)('run_command in its sandbox', () => {
  let ws: TempWorkspace;
  let dataDir: string;
  const SECRET = 'sk-canary-1b7e2d';

  beforeAll(async () => {
    ws = await makeWorkspace();
    await mkdir(join(ws.root, 'project'));
    // The server's own files beside the workspace: its .env and DATA_DIR.
    dataDir = mkdtempSync(join(tmpdir(), 'loopwright-data-'));
    writeFileSync(join(dataDir, 'postgres-password'), 'hunter2\n');
    writeFileSync(join(dirname(ws.root), '.env'), `OPENAI_API_KEY=${SECRET}\n`);
    process.env.LOOPWRIGHT_TEST_SECRET = SECRET; // in this (the server's) environment only
  });
  afterAll(() => {
    delete process.env.LOOPWRIGHT_TEST_SECRET;
    return ws.cleanup();
  });

  async function runner(overrides: Partial<AppConfig> = {}): Promise<ToolRunner> {
    const config = testConfig(ws.root, {
      enableRunCommand: true,
      toolTimeoutMs: 15_000,
      dataDir,
      commandEnv: buildCommandEnv({ PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/root' }, []),
      ...overrides,
    });
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(config), ToolsModule],
    }).compile();
    await moduleRef.init();
    return moduleRef.get(ToolRunner);
  }

  const run = (r: ToolRunner, command: string, signal?: AbortSignal): Promise<ToolResult> =>
    r.runCall(
      'run_command',
      { command },
      { runId: 'r', sessionId: 's', toolCallId: 'c', parentSignal: signal },
    );

  it("cannot read the server's environment or command line through /proc", async () => {
    const r = await runner();
    const result = await run(
      r,
      `cat /proc/1/environ /proc/$PPID/environ /proc/1/cmdline 2>&1; echo; ls /proc | tr '\\n' ' '`,
    );
    expect(result.content).not.toContain(SECRET);
    expect(result.content).not.toContain('OPENAI_API_KEY');
    // Only the sandbox's own few processes exist in its /proc, never the server's pid.
    expect(result.content).not.toContain(` ${process.pid} `);
  });

  it('cannot read or list anything outside its workspace', async () => {
    const r = await runner();
    for (const command of [
      `cat ${join(dirname(ws.root), '.env')}`,
      `ls ${dataDir}`,
      `cat ${join(dataDir, 'postgres-password')}`,
      `cat ../.env`,
      `ls /proc/self/root${dataDir}`,
      `ls ${ws.outside}`,
      `cat /etc/shadow`,
      `ls /root`,
    ]) {
      const result = await run(r, command);
      expect(result.content).not.toContain(SECRET);
      expect(result.content).not.toContain('hunter2');
      expect(result.content).toMatch(/No such file or directory|Permission denied|cannot access|can't open/);
    }
    const inside = await run(r, 'echo made > project/ok.txt && cat project/ok.txt && pwd');
    expect(inside.content).toContain(`made\n${ws.root}`);
    expect(readFileSync(join(ws.root, 'project', 'ok.txt'), 'utf8')).toBe('made\n');
  });

  describe('the network', () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      server = createServer((socket) => socket.end('hello from the host\n'));
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((done) => server.close(() => done())));

    const probe = (p: number) =>
      `node -e "require('net').connect(${p}, '127.0.0.1').on('data', (d) => { process.stdout.write(d); process.exit(0); }).on('error', (e) => { console.log('refused: ' + e.code); process.exit(0); })"`;

    it('is not there unless RUN_COMMAND_NETWORK=true — not even loopback', async () => {
      const result = await run(await runner(), probe(port));
      expect(result.content).not.toContain('hello from the host');
      expect(result.content).toMatch(/refused: E/);
    });

    it('is the host’s with RUN_COMMAND_NETWORK=true', async () => {
      const result = await run(await runner({ runCommandNetwork: true }), probe(port));
      expect(result.content).toContain('hello from the host');
    });
  });

  it('ends what the command started, setsid and nohup included, when the call returns', async () => {
    const marker = '4242.0417';
    const result = await run(
      await runner(),
      `setsid sleep ${marker} & nohup sleep ${marker} >/dev/null 2>&1 & echo started`,
    );
    expect(result.content).toContain('started');
    await eventually(() => hostProcesses(`sleep ${marker}`).length === 0);
  });

  (haveGroups ? it : it.skip)(
    'stops a command past RUN_COMMAND_MEMORY_MB, saying so, and the server lives on',
    async () => {
      const r = await runner({ runCommandMemoryMb: 64 });
      const result = await run(
        r,
        `node -e "const a = []; for (;;) a.push(Buffer.alloc(16 * 1024 * 1024, 1))"`,
      );
      expect(result).toMatchObject({ isError: true, errorCode: 'EXECUTION_ERROR' });
      expect(result.content).toContain('the memory limit of 64 MiB (RUN_COMMAND_MEMORY_MB)');
      const after = await run(r, 'echo still here');
      expect(after.content).toContain('still here');
    },
  );

  (haveGroups ? it : it.skip)('stops a fork bomb at the process limit, saying so', async () => {
    const r = await runner();
    const result = await run(
      r,
      `for i in $(seq 1 600); do sleep 37.5 >/dev/null 2>&1 & done 2>&1 | tail -n 1; echo forked`,
    );
    expect(result).toMatchObject({ isError: true, errorCode: 'EXECUTION_ERROR' });
    expect(result.content).toContain('stopped by a limit — the limit of 256 processes at once');
    await eventually(() => hostProcesses('sleep 37.5').length === 0);
  });

  (V2_CONTROLLERS ? it : it.skip)(
    'holds a command tree to its limits via cgroup v2 where the host has it, and says so at start-up',
    async () => {
      const config = testConfig(ws.root, { enableRunCommand: true, runCommandMemoryMb: 64 });
      const sandbox = new CommandSandbox(config);
      sandbox.onModuleInit();
      expect(sandbox.limitsHeld).toMatch(/per command tree via cgroup v2 at \//);
      const r = await runner({ runCommandMemoryMb: 64 });
      const result = await run(
        r,
        `node -e "const a = []; for (;;) a.push(Buffer.alloc(16 * 1024 * 1024, 1))"`,
      );
      expect(result.content).toContain('the memory limit of 64 MiB (RUN_COMMAND_MEMORY_MB)');
    },
  );

  it('offers no run_command where no sandbox can be made', () => {
    class NoSandbox extends CommandSandbox {
      protected override readonly program = 'loopwright-no-such-bwrap';
    }
    const config = testConfig(ws.root, { enableRunCommand: true });
    const sandbox = new NoSandbox(config);
    sandbox.onModuleInit();
    expect(
      new RunCommandTool(config, sandbox, new BackgroundCommands(config, new ServerProcess())).isEnabled(
        config,
      ),
    ).toBe(false);
    const working = new CommandSandbox(config);
    working.onModuleInit();
    expect(
      new RunCommandTool(config, working, new BackgroundCommands(config, new ServerProcess())).isEnabled(
        config,
      ),
    ).toBe(true);
  });
});
