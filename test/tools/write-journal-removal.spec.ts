import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import fsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commitChanges, type PlannedChange } from '../../src/tools/fs/file-change-plan';
import { recoverInterruptedWrites } from '../../src/tools/fs/write-journal';
import { ToolError } from '../../src/tools/tool';

/**
 * A journal that cannot be retired after its change is done is the write's error, not swallowed,
 * and it is never replayed: a file created since at a path the change deleted survives the next
 * start. The failure is injected into the one file-system call that retires the journal.
 */

function workspace(): string {
  const root = mkdtempSync(join(tmpdir(), 'loopwright-journal-removal-'));
  writeFileSync(join(root, 'a.txt'), 'old a\n');
  writeFileSync(join(root, 'c.txt'), 'old c\n');
  return root;
}

const change = (root: string, name: string, before: string | null, after: string | null): PlannedChange => ({
  path: name,
  absPath: join(root, name),
  before: before === null ? null : Buffer.from(before),
  after: after === null ? null : Buffer.from(after),
});

/** Writes a.txt and deletes c.txt: two steps, so the change is journaled. */
const rewriteAndDelete = (root: string) =>
  commitChanges(root, [change(root, 'a.txt', 'old a\n', 'new a\n'), change(root, 'c.txt', 'old c\n', null)]);

const journalCall = (path: unknown) => String(path).includes('.loopwright-journal.');
/** The rename of a written journal to its committed name (the journal's own staging is let through). */
const markCall = (from: unknown, to: unknown) => journalCall(from) && !String(to).endsWith('.json');
const denied = () => Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });

afterEach(() => jest.restoreAllMocks());

describe('a write journal whose removal fails', () => {
  it('fails the write, and the next start does not replay its delete over a file created since', async () => {
    const root = workspace();
    const unlink = fsPromises.unlink;
    jest
      .spyOn(fsPromises, 'unlink')
      .mockImplementation((path) => (journalCall(path) ? Promise.reject(denied()) : unlink(path)));

    const write = rewriteAndDelete(root);
    await expect(write).rejects.toBeInstanceOf(ToolError);
    await expect(write).rejects.toThrow(/change is applied.*could not be removed \(EACCES\)/);
    jest.restoreAllMocks();
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('new a\n');
    expect(existsSync(join(root, 'c.txt'))).toBe(false);

    writeFileSync(join(root, 'c.txt'), 'created since\n');
    await recoverInterruptedWrites(root, 0);
    expect(readFileSync(join(root, 'c.txt'), 'utf8')).toBe('created since\n');
    expect(readdirSync(root).sort()).toEqual(['a.txt', 'c.txt']);
  });

  it('fails the write, naming the journal, when it cannot even be marked committed', async () => {
    const root = workspace();
    const rename = fsPromises.rename;
    jest
      .spyOn(fsPromises, 'rename')
      .mockImplementation((from, to) => (markCall(from, to) ? Promise.reject(denied()) : rename(from, to)));

    await expect(rewriteAndDelete(root)).rejects.toThrow(
      /change is applied, but its journal \.loopwright-journal\.[0-9a-f]{12}\.json could not be marked committed \(EACCES\)/,
    );
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('new a\n');
  });
});
