import { Test } from '@nestjs/testing';
import { readdirSync } from 'node:fs';
import {
  chmod,
  copyFile,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCommandEnv } from '../../src/config/command-env';
import { ConfigModule } from '../../src/config/config.module';
import { recoverInterruptedWrites } from '../../src/tools/fs/write-journal';
import { ToolRegistry } from '../../src/tools/tool-registry.service';
import { ToolRunner } from '../../src/tools/tool-runner.service';
import { ToolsModule } from '../../src/tools/tools.module';
import { Workspaces } from '../../src/tools/workspaces';
import { buildSwapper, startSwapper } from './support/folder-swapper';
import { eventually } from '../support/eventually';
import { makeWorkspace, testConfig, toolContext, type TempWorkspace } from './support/tool-fixtures';

/**
 * A command of one session swaps a folder of the workspace with a symbolic link to the outside
 * (renameat2 RENAME_EXCHANGE, in a loop, in a real process) while the file tools work below that
 * folder. Whatever the tools answer — a file, an error — nothing outside may be read, created or
 * changed. Bounded in iterations and time; stops at the first escape.
 */

const MAX_ITERATIONS = 1500;
const MAX_MS = 40_000;
const MARK = 'OUTSIDE-SECRET';

/** Every file and link below `dir`, with its content: the outside must be byte-identical afterwards. */
async function snapshot(dir: string, rel = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(join(dir, rel))).sort()) {
    const path = join(rel, name);
    const stats = await lstat(join(dir, path));
    if (stats.isSymbolicLink()) out[path] = `-> ${await readlink(join(dir, path))}`;
    else if (stats.isDirectory()) Object.assign(out, { [`${path}/`]: '' }, await snapshot(dir, path));
    else out[path] = await readFile(join(dir, path), 'latin1');
  }
  return out;
}

describe('file tools while a concurrent process swaps a workspace folder with a link to the outside', () => {
  let ws: TempWorkspace;
  let scratch: string;

  beforeEach(async () => {
    ws = await makeWorkspace();
    scratch = await mkdtemp(join(tmpdir(), 'loopwright-swapper-'));
    // Inside: dir/ (a real folder). Outside: target/ with the same names, holding the secret.
    for (const [base, text] of [
      [join(ws.root, 'dir'), 'inside'],
      [join(ws.outside, 'target'), MARK],
    ] as const) {
      await mkdir(join(base, 'sub'), { recursive: true });
      await writeFile(join(base, 'f.txt'), `${text} alpha\n`);
      await writeFile(join(base, 'sub', 'g.txt'), `${text} sub\n`);
    }
    await writeFile(join(ws.outside, 'target', `${MARK}-name.txt`), `${MARK}\n`);
    await symlink(join(ws.outside, 'target'), join(ws.root, 'swap'));
  });

  afterEach(async () => {
    await ws.cleanup();
    await rm(scratch, { recursive: true, force: true });
  });

  /**
   * The swap runs as a session's run_command (in its bubblewrap sandbox, the workspace writable)
   * where the C swapper can be built; otherwise as a plain process doing the same.
   */
  async function startSwap(
    runner: ToolRunner,
    argv: string[],
  ): Promise<{ via: string; stop: () => Promise<void> }> {
    if (argv.length === 1) {
      await mkdir(join(ws.root, '.swapper'));
      await copyFile(argv[0], join(ws.root, '.swapper', 'swap'));
      await chmod(join(ws.root, '.swapper', 'swap'), 0o755);
      const attacker = new AbortController();
      let swapping = false;
      let settled = false;
      const done = runner
        .runCall(
          'run_command',
          { command: './.swapper/swap dir swap 100', timeout_ms: 110_000 },
          {
            runId: 'run-attacker',
            sessionId: 'attacker',
            toolCallId: 'swap',
            parentSignal: attacker.signal,
            emitOutput: (_stream, chunk) => {
              if (chunk.includes('swapping')) swapping = true;
            },
          },
        )
        .finally(() => (settled = true));
      await eventually(() => swapping || settled, 10_000);
      if (swapping) {
        return {
          via: 'run_command (sandboxed)',
          stop: async () => {
            attacker.abort();
            await done;
          },
        };
      }
      console.log(
        `run_command could not swap (${(await done).content.slice(0, 200)}); a plain process swaps`,
      );
    }
    const swapper = await startSwapper(argv, join(ws.root, 'dir'), join(ws.root, 'swap'), 100);
    return { via: 'a process', stop: () => swapper.stop() };
  }

  it('never reads, creates or changes anything outside the workspace', async () => {
    const built = buildSwapper(scratch);
    if ('reason' in built) {
      console.log(`skipped: ${built.reason}`);
      return;
    }
    const before = await snapshot(ws.outside);
    const config = testConfig(ws.root, {
      enableRunCommand: true,
      toolTimeoutMs: 120_000,
      runCommandMaxTimeoutMs: 120_000,
      commandEnv: buildCommandEnv({ PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp' }, []),
    });
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(config), ToolsModule],
    }).compile();
    await moduleRef.init();
    const runner = moduleRef.get(ToolRunner);
    const editTool = moduleRef.get(ToolRegistry).get('edit_file')!;
    const victim = { runId: 'run-victim', sessionId: 'victim', toolCallId: 'call' };
    const call = async (name: string, args: Record<string, unknown>) =>
      (await runner.runCall(name, args, victim)).content;

    /** The first escape of each kind, and the iteration it happened at. */
    const leaks = new Map<string, string>();
    const leak = (kind: string, i: number, what: string) => {
      if (!leaks.has(kind)) leaks.set(kind, `iteration ${i}: ${what.slice(0, 200)}`);
    };
    let insideReads = 0;
    let iterations = 0;
    const swap = await startSwap(runner, built.argv);
    const openFds = () => readdirSync('/proc/self/fd').length;
    const fdsBefore = openFds();
    let fdsAfter: number;
    const started = Date.now();
    try {
      for (; iterations < MAX_ITERATIONS && Date.now() - started < MAX_MS; iterations++) {
        const i = iterations;
        const [from, to] = i % 2 === 0 ? ['alpha', 'beta'] : ['beta', 'alpha'];
        const calls: [string, () => Promise<string>][] = [
          ['read_file', () => call('read_file', { path: 'dir/f.txt' })],
          ['read_file (below)', () => call('read_file', { path: 'dir/sub/g.txt' })],
          ['write_file', () => call('write_file', { path: `dir/sub/w${i}.txt`, content: 'w\n' })],
          [
            'write_file (overwrite)',
            () => call('write_file', { path: 'dir/sub/g.txt', content: 'inside sub\n', overwrite: true }),
          ],
          ['edit_file', () => call('edit_file', { path: 'dir/f.txt', old_text: from, new_text: to })],
          [
            'edit_file approval',
            () =>
              editTool.describeForApproval!(
                { path: 'dir/f.txt', old_text: from, new_text: to },
                toolContext(config),
              ),
          ],
          ['list_directory', () => call('list_directory', { path: 'dir', depth: 3 })],
          ['list_directory (root)', () => call('list_directory', { depth: 3 })],
          ['search_files', () => call('search_files', { query: 'OUTSIDE-SEC' })],
          ['glob', () => call('glob', { pattern: 'dir/**' })],
          [
            'apply_patch',
            () =>
              call('apply_patch', {
                patch: [
                  `--- /dev/null\n+++ b/dir/p${i}.txt\n@@ -0,0 +1 @@\n+p\n`,
                  `--- /dev/null\n+++ b/dir/sub/q${i}.txt\n@@ -0,0 +1 @@\n+q\n`,
                ].join(''),
              }),
          ],
        ];
        const results = await Promise.allSettled(calls.map(([, run]) => run()));
        results.forEach((result, n) => {
          if (result.status !== 'fulfilled') return leak(`${calls[n][0]} threw`, i, String(result.reason));
          const text = result.value;
          // search_files echoes its query when nothing matches: only a match line is a leak there.
          const leaked = calls[n][0] === 'search_files' ? /\.txt:\d+: /.test(text) : text.includes(MARK);
          if (leaked) leak(calls[n][0], i, text);
          if (n === 0 && text.startsWith('inside')) insideReads++;
        });
        const now = await snapshot(ws.outside);
        for (const key of Object.keys({ ...now, ...before })) {
          if (now[key] === before[key]) continue;
          const kind =
            before[key] === undefined ? 'created' : now[key] === undefined ? 'removed' : 'modified';
          leak(`outside ${kind}`, i, key);
        }
      }
      fdsAfter = openFds();
    } finally {
      await swap.stop();
      await moduleRef.close();
    }
    // Recovery walks the same tree (a journal or staged file must not lead it outside either).
    await recoverInterruptedWrites(ws.root, 0);
    console.log(
      `swapped by ${swap.via}: ${iterations} iterations, ${insideReads} reads of the inside file, ${leaks.size} kinds of escape, open descriptors ${fdsBefore} -> ${fdsAfter}`,
    );
    expect(Object.fromEntries(leaks)).toEqual({});
    expect(await snapshot(ws.outside)).toEqual(before);
    // The tools did work meanwhile (the test is not passing because every call failed).
    expect(insideReads).toBeGreaterThan(0);
    // Every held folder was closed again (thousands of calls: a leak would show by hundreds).
    expect(fdsAfter).toBeLessThan(fdsBefore + 20);
  }, 180_000);

  it("removes a deleted session's folder without emptying what a swapped-in link points to", async () => {
    const built = buildSwapper(scratch);
    if ('reason' in built) {
      console.log(`skipped: ${built.reason}`);
      return;
    }
    const before = await snapshot(ws.outside);
    const workspaces = new Workspaces({ workspaceRoot: ws.root, workspaceScope: 'session' });
    let rounds = 0;
    for (; rounds < 40; rounds++) {
      const folder = await workspaces.forSession('key', `s${rounds}`);
      await mkdir(join(folder, 'dir'));
      for (let n = 0; n < 50; n++) await writeFile(join(folder, 'dir', `f${n}.txt`), 'inside\n');
      await symlink(join(ws.outside, 'target'), join(folder, 'swap'));
      const swapper = await startSwapper(built.argv, join(folder, 'dir'), join(folder, 'swap'), 10);
      try {
        await workspaces.sessionDeleted('key', `s${rounds}`).catch(() => undefined);
      } finally {
        await swapper.stop();
      }
      if (JSON.stringify(await snapshot(ws.outside)) !== JSON.stringify(before)) break;
    }
    console.log(`${rounds} sessions deleted while swapping`);
    expect(await snapshot(ws.outside)).toEqual(before);
  }, 120_000);
});
