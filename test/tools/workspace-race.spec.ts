import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppConfig } from '../../src/config/app-config';
import { ApplyPatchTool } from '../../src/tools/builtin/apply-patch.tool';
import { EditFileTool } from '../../src/tools/builtin/edit-file.tool';
import { GlobTool } from '../../src/tools/builtin/glob.tool';
import { ListDirectoryTool } from '../../src/tools/builtin/list-directory.tool';
import { ReadFileTool } from '../../src/tools/builtin/read-file.tool';
import { SearchFilesTool } from '../../src/tools/builtin/search-files.tool';
import { WriteFileTool } from '../../src/tools/builtin/write-file.tool';
import { recoverInterruptedWrites } from '../../src/tools/fs/write-journal';
import { Workspaces } from '../../src/tools/workspaces';
import { buildSwapper, startSwapper } from './support/folder-swapper';
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
  let config: AppConfig;
  let scratch: string;

  beforeEach(async () => {
    ws = await makeWorkspace();
    config = testConfig(ws.root);
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

  it('never reads, creates or changes anything outside the workspace', async () => {
    const built = buildSwapper(scratch);
    if ('reason' in built) {
      console.log(`skipped: ${built.reason}`);
      return;
    }
    const before = await snapshot(ws.outside);
    const ctx = toolContext(config);
    const read = new ReadFileTool();
    const write = new WriteFileTool();
    const edit = new EditFileTool();
    const list = new ListDirectoryTool();
    const search = new SearchFilesTool();
    const glob = new GlobTool();
    const patch = new ApplyPatchTool();

    /** The first escape of each kind, and the iteration it happened at. */
    const leaks = new Map<string, string>();
    const leak = (kind: string, i: number, what: string) => {
      if (!leaks.has(kind)) leaks.set(kind, `iteration ${i}: ${what.slice(0, 200)}`);
    };
    let insideReads = 0;
    let iterations = 0;
    const swapper = await startSwapper(built.argv, join(ws.root, 'dir'), join(ws.root, 'swap'), 60);
    const started = Date.now();
    try {
      for (; iterations < MAX_ITERATIONS && Date.now() - started < MAX_MS; iterations++) {
        const i = iterations;
        const [from, to] = i % 2 === 0 ? ['alpha', 'beta'] : ['beta', 'alpha'];
        const calls: [string, () => Promise<string>][] = [
          ['read_file', async () => (await read.execute({ path: 'dir/f.txt' }, ctx)).content],
          ['read_file (below)', async () => (await read.execute({ path: 'dir/sub/g.txt' }, ctx)).content],
          [
            'write_file',
            async () => (await write.execute({ path: `dir/sub/w${i}.txt`, content: 'w\n' }, ctx)).content,
          ],
          [
            'write_file (overwrite)',
            async () =>
              (await write.execute({ path: 'dir/sub/g.txt', content: 'inside sub\n', overwrite: true }, ctx))
                .content,
          ],
          [
            'edit_file',
            async () =>
              (await edit.execute({ path: 'dir/f.txt', old_text: from, new_text: to }, ctx)).content,
          ],
          [
            'edit_file approval',
            () => edit.describeForApproval({ path: 'dir/f.txt', old_text: from, new_text: to }, ctx),
          ],
          ['list_directory', async () => (await list.execute({ path: 'dir', depth: 3 }, ctx)).content],
          ['list_directory (root)', async () => (await list.execute({ depth: 3 }, ctx)).content],
          ['search_files', async () => (await search.execute({ query: 'OUTSIDE-SEC' }, ctx)).content],
          ['glob', async () => (await glob.execute({ pattern: 'dir/**' }, ctx)).content],
          [
            'apply_patch',
            async () =>
              (
                await patch.execute(
                  {
                    patch: [
                      `--- /dev/null\n+++ b/dir/p${i}.txt\n@@ -0,0 +1 @@\n+p\n`,
                      `--- /dev/null\n+++ b/dir/sub/q${i}.txt\n@@ -0,0 +1 @@\n+q\n`,
                    ].join(''),
                  },
                  ctx,
                )
              ).content,
          ],
        ];
        const results = await Promise.allSettled(calls.map(([, call]) => call()));
        results.forEach((result, n) => {
          if (result.status !== 'fulfilled') return;
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
    } finally {
      await swapper.stop();
    }
    // Recovery walks the same tree (a journal or staged file must not lead it outside either).
    await recoverInterruptedWrites(ws.root, 0);
    console.log(
      `${iterations} iterations, ${insideReads} reads of the inside file, ${leaks.size} kinds of escape`,
    );
    expect(Object.fromEntries(leaks)).toEqual({});
    expect(await snapshot(ws.outside)).toEqual(before);
    // The tools did work meanwhile (the test is not passing because every call failed).
    expect(insideReads).toBeGreaterThan(0);
  }, 120_000);

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
