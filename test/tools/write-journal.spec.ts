import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { recoverInterruptedWrites } from '../../src/tools/fs/write-journal';

/** A change of several files is all or nothing across a crash: a process killed mid-commit, then recovery. */

const SCRIPT = resolve(__dirname, 'support/commit-and-pause.js');

function workspace(): string {
  const root = mkdtempSync(join(tmpdir(), 'loopwright-journal-'));
  writeFileSync(join(root, 'a.txt'), 'old a\n');
  writeFileSync(join(root, 'c.txt'), 'old c\n');
  return root;
}

/** Starts the commit in another process, waits until it pauses before `step`, and kills it there. */
function killMidCommit(root: string, step: number): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [SCRIPT, root, String(step)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('paused')) child.kill('SIGKILL');
    });
    child.once('exit', (code, signal) =>
      signal === 'SIGKILL' ? done() : fail(new Error(`commit ended on its own (${code})`)),
    );
  });
}

const state = (root: string) => ({
  a: readFileSync(join(root, 'a.txt'), 'utf8'),
  b: existsSync(join(root, 'b.txt')) ? readFileSync(join(root, 'b.txt'), 'utf8') : null,
  c: existsSync(join(root, 'c.txt')) ? readFileSync(join(root, 'c.txt'), 'utf8') : null,
});

describe('multi-file changes across a crash', () => {
  it('finishes a change killed between its renames at the next start: all of it, not half', async () => {
    const root = workspace();
    await killMidCommit(root, 1);
    // Half applied on disk: the first rename happened, the rest did not.
    expect(state(root)).toEqual({ a: 'new a\n', b: null, c: 'old c\n' });

    const recovered = await recoverInterruptedWrites(root, 0);
    expect(recovered.rolledForward).toBe(1);
    expect(state(root)).toEqual({ a: 'new a\n', b: 'new b\n', c: null });
    expect(readdirSync(root).sort()).toEqual(['a.txt', 'b.txt']);
  });

  it('finishes a change killed before its first rename (the journal is written): all of it', async () => {
    const root = workspace();
    await killMidCommit(root, 0);
    expect(state(root)).toEqual({ a: 'old a\n', b: null, c: 'old c\n' });
    await recoverInterruptedWrites(root, 0);
    expect(state(root)).toEqual({ a: 'new a\n', b: 'new b\n', c: null });
  });

  it('removes staged files no journal names once they are old, and leaves fresh ones to a live writer', async () => {
    const root = workspace();
    const old = join(root, '.a.txt.0123456789ab.tmp');
    const fresh = join(root, '.c.txt.ba9876543210.tmp');
    writeFileSync(old, 'half written');
    writeFileSync(fresh, 'being written');
    utimesSync(old, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
    const recovered = await recoverInterruptedWrites(root);
    expect(recovered).toEqual({ rolledForward: 0, removedTemps: 1 });
    expect(existsSync(old)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
    expect(state(root)).toEqual({ a: 'old a\n', b: null, c: 'old c\n' });
  });

  it('keeps a journal forged in the workspace from moving or deleting anything outside its folder', async () => {
    const root = workspace();
    const outside = mkdtempSync(join(tmpdir(), 'loopwright-journal-outside-'));
    for (const name of ['moved.txt', 'deleted.txt', 'climbed.txt']) writeFileSync(join(outside, name), name);
    writeFileSync(
      join(root, '.loopwright-journal.0123456789ab.json'),
      JSON.stringify({
        renames: [
          [join(outside, 'moved.txt'), join(root, 'stolen.txt')],
          [`../${basename(outside)}/climbed.txt`, 'climbed.txt'],
        ],
        deletes: [join(outside, 'deleted.txt'), `../${basename(outside)}/deleted.txt`],
      }),
    );
    const recovered = await recoverInterruptedWrites(root, 0);
    expect(recovered.rolledForward).toBe(1);
    expect(readdirSync(outside).sort()).toEqual(['climbed.txt', 'deleted.txt', 'moved.txt']);
    expect(readdirSync(root).sort()).toEqual(['a.txt', 'c.txt']);
  });
});
