import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { isInside } from './workspace-paths';
import { ToolError } from '../tool';
import { atomicWriteFile } from './atomic-write';
import { errnoCode } from './errno';
import { at, closeAll, openChildDir, openFolderChain, openRoot, splitRelative } from './held-dir';

/**
 * A change of several files is all or nothing, also across a crash: before the first rename, the
 * whole change — every staged file's rename and every deletion — is written to a journal (itself
 * written atomically) at the workspace's root. Once the journal exists the change rolls forward: the
 * next start finishes what a killed process began. A crash before the journal leaves only staged
 * temporary files, which the next start removes: nothing changed.
 *
 * Paths in a journal are relative to the folder it lies in and are only ever resolved below that
 * folder, through held folders: a journal is a file of the workspace, which a command can forge.
 */
export interface Journal {
  renames: [temp: string, target: string][];
  deletes: string[];
}

const JOURNAL = /^\.loopwright-journal\.[0-9a-f]{12}\.json$/;
/** A journal whose every step is done, not yet removed: removed by recovery, never replayed. */
const COMMITTED = /^\.loopwright-journal\.[0-9a-f]{12}\.done$/;
/** The temporary files atomic writes stage: `.<name>.<12 hex>.tmp` (atomic-write.ts). */
const STAGED = /^\..+\.[0-9a-f]{12}\.tmp$/;
/** Folders the recovery does not walk into (large, and never written through the tools' staging). */
const SKIP = new Set(['.git', 'node_modules']);
/** A journal is a few paths; anything larger is not one of ours. */
const MAX_JOURNAL_BYTES = 1024 * 1024;

/**
 * Writes the journal at `root`; the returned function retires it once every step is done: marks it
 * committed (one rename to its `.done` name, which recovery removes and never replays), then
 * removes it. Either failing is the write's error, not swallowed: a journal left as it was would
 * replay its deletes at the next start, over whatever has been created at those paths since.
 */
export async function openJournal(root: string, journal: Journal): Promise<() => Promise<void>> {
  const name = `.loopwright-journal.${randomBytes(6).toString('hex')}.json`;
  await atomicWriteFile(root, name, Buffer.from(JSON.stringify(journal)));
  return async () => {
    const dir = await openRoot(root);
    try {
      await retireJournal(dir, name);
    } finally {
      await dir.close();
    }
  };
}

/** Marks the journal `name` committed, then removes it; a failure of either is a ToolError saying which. */
async function retireJournal(dir: FileHandle, name: string): Promise<void> {
  const done = name.replace(/\.json$/, '.done');
  try {
    await rename(at(dir, name), at(dir, done));
  } catch (err) {
    throw new ToolError(
      'EXECUTION_ERROR',
      `The change is applied, but its journal ${name} could not be marked committed (${errnoCode(err) ?? 'unexpected error'}): the next start will apply it again.`,
    );
  }
  try {
    await unlink(at(dir, done));
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return; // removed by a recovery meanwhile
    throw new ToolError(
      'EXECUTION_ERROR',
      `The change is applied, but its committed journal ${done} could not be removed (${errnoCode(err) ?? 'unexpected error'}); the next start removes it without applying it again.`,
    );
  }
}

/** Applies a journal's steps that are not done yet (idempotent: a finished step is skipped). */
export async function rollForward(base: FileHandle, journal: Journal): Promise<void> {
  for (const [temp, target] of journal.renames) {
    await inFolder(base, temp, async (tempDir, tempName) =>
      inFolder(base, target, async (targetDir, targetName) => {
        try {
          await rename(at(tempDir, tempName), at(targetDir, targetName));
        } catch (err) {
          if (errnoCode(err) !== 'ENOENT') throw err; // already renamed
        }
      }),
    );
  }
  for (const path of journal.deletes) {
    await inFolder(base, path, async (dir, name) => {
      try {
        await unlink(at(dir, name));
      } catch (err) {
        // Gone: already deleted. A folder there now: not the file the change deleted, left alone.
        const code = errnoCode(err);
        if (code !== 'ENOENT' && code !== 'EISDIR' && code !== 'EPERM') throw err;
      }
    });
  }
}

/** Runs `action` with the held folder of `rel` (below `base`); a folder that is gone: nothing to do. */
async function inFolder(
  base: FileHandle,
  rel: string,
  action: (dir: FileHandle, name: string) => Promise<void>,
): Promise<void> {
  const { folders, name } = splitRelative(rel);
  let chain: FileHandle[];
  try {
    chain = await openFolderChain(base, folders, rel);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return;
    throw err;
  }
  try {
    await action(chain[chain.length - 1] ?? base, name);
  } finally {
    await closeAll(chain);
  }
}

export interface Recovery {
  rolledForward: number;
  removedTemps: number;
}

/**
 * At start: finishes changes a killed process left journaled, and removes staged files no change
 * will use and committed journals (counted with them: their change is done, nothing is replayed). Only what is older than `minAgeMs` is touched — another replica sharing the workspace
 * may be in the middle of a write right now. The tree is walked through held folders (a folder
 * swapped for a link meanwhile is not entered), journals first, so that their staged files are
 * renamed before stray ones are removed.
 */
export async function recoverInterruptedWrites(root: string, minAgeMs = 60_000): Promise<Recovery> {
  const result: Recovery = { rolledForward: 0, removedTemps: 0 };
  // Whole milliseconds on both sides: mtimeMs has a fraction that Date.now() lacks, so a file written
  // in this very millisecond would otherwise be younger than 0 ms.
  const oldEnough = async (dir: FileHandle, name: string) =>
    Date.now() - Math.floor((await lstat(at(dir, name))).mtimeMs) >= minAgeMs;
  const rootDir = await openRoot(root);
  try {
    await visitFolders(rootDir, '', async (dir, rel, names) => {
      for (const name of names.filter((n) => JOURNAL.test(n))) {
        if (!(await oldEnough(dir, name).catch(() => false))) continue;
        const journal = await readJournal(dir, name, join(root, rel));
        if (journal !== null) await rollForward(dir, journal);
        await retireJournal(dir, name);
        result.rolledForward++;
      }
    });
    await visitFolders(rootDir, '', async (dir, _rel, names) => {
      for (const name of names.filter((n) => STAGED.test(n) || COMMITTED.test(n))) {
        if (!(await oldEnough(dir, name).catch(() => false))) continue;
        await unlink(at(dir, name)).catch(() => undefined);
        result.removedTemps++;
      }
    });
  } finally {
    await rootDir.close();
  }
  return result;
}

/** Depth first, each folder opened from the held one above it; `visit` gets the names of its files. */
async function visitFolders(
  dir: FileHandle,
  rel: string,
  visit: (dir: FileHandle, rel: string, files: string[]) => Promise<void>,
): Promise<void> {
  let entries;
  try {
    entries = await readdir(at(dir), { withFileTypes: true });
  } catch {
    return; // gone or unreadable: nothing of ours to recover there
  }
  await visit(
    dir,
    rel,
    entries.filter((e) => e.isFile()).map((e) => e.name),
  );
  for (const entry of entries) {
    if (!entry.isDirectory() || SKIP.has(entry.name)) continue;
    const child = await openChildDir(dir, entry.name);
    if (child.kind !== 'dir') continue; // no longer a folder: not entered
    try {
      await visitFolders(child.handle, rel === '' ? entry.name : `${rel}/${entry.name}`, visit);
    } finally {
      await child.handle.close();
    }
  }
}

/**
 * A journal's steps as paths below its folder. Journals written before they were relative held
 * absolute paths: those are taken when they lie below the journal's folder. Any other step (one
 * that climbs out, or is not a path) is dropped: no journal moves anything outside its folder.
 */
async function readJournal(dir: FileHandle, name: string, folder: string): Promise<Journal | null> {
  let text: string;
  const handle = await open(at(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > MAX_JOURNAL_BYTES) return null;
    text = await handle.readFile('utf8');
  } finally {
    await closeAll([handle]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const below = (path: unknown): string | null => {
    if (typeof path !== 'string' || path === '') return null;
    const rel = isAbsolute(path)
      ? isInside(folder, path)
        ? relative(folder, path).split(sep).join('/')
        : null
      : path;
    if (rel === null || rel === '') return null;
    return rel.split('/').every((part) => part !== '' && part !== '.' && part !== '..') ? rel : null;
  };
  const journal = parsed as Partial<Journal>;
  const renames = Array.isArray(journal.renames) ? journal.renames : [];
  const deletes = Array.isArray(journal.deletes) ? journal.deletes : [];
  return {
    renames: renames.flatMap((step) => {
      if (!Array.isArray(step)) return [];
      const [temp, target] = [below(step[0]), below(step[1])];
      return temp !== null && target !== null ? [[temp, target] as [string, string]] : [];
    }),
    deletes: deletes.flatMap((path) => {
      const rel = below(path);
      return rel === null ? [] : [rel];
    }),
  };
}
