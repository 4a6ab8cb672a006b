import { randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { atomicWriteFile } from './atomic-write';
import { errnoCode } from './errno';

/**
 * A change of several files is all or nothing, also across a crash: before the first rename, the
 * whole change — every staged file's rename and every deletion — is written to a journal (itself
 * written atomically) beside the first file. Once the journal exists the change rolls forward: the
 * next start finishes what a killed process began. A crash before the journal leaves only staged
 * temporary files, which the next start removes: nothing changed.
 */
export interface Journal {
  renames: [temp: string, target: string][];
  deletes: string[];
}

const JOURNAL = /^\.loopwright-journal\.[0-9a-f]{12}\.json$/;
/** The temporary files atomic writes stage: `.<name>.<12 hex>.tmp` (atomic-write.ts). */
const STAGED = /^\..+\.[0-9a-f]{12}\.tmp$/;
/** Folders the recovery does not walk into (large, and never written through the tools' staging). */
const SKIP = new Set(['.git', 'node_modules']);

/** Writes the journal; the returned function removes it once every step is done. */
export async function openJournal(dir: string, journal: Journal): Promise<() => Promise<void>> {
  const path = join(dir, `.loopwright-journal.${randomBytes(6).toString('hex')}.json`);
  await atomicWriteFile(path, Buffer.from(JSON.stringify(journal)));
  return () => unlink(path).catch(() => undefined);
}

/** Applies a journal's steps that are not done yet (idempotent: a finished step is skipped). */
export async function rollForward(journal: Journal): Promise<void> {
  for (const [temp, target] of journal.renames) {
    try {
      await rename(temp, target);
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT') throw err; // already renamed
    }
  }
  for (const path of journal.deletes) await unlink(path).catch(() => undefined);
}

export interface Recovery {
  rolledForward: number;
  removedTemps: number;
}

/**
 * At start: finishes changes a killed process left journaled, and removes staged files no change
 * will use. Only what is older than `minAgeMs` is touched — another replica sharing the workspace
 * may be in the middle of a write right now.
 */
export async function recoverInterruptedWrites(root: string, minAgeMs = 60_000): Promise<Recovery> {
  const result: Recovery = { rolledForward: 0, removedTemps: 0 };
  const journals: string[] = [];
  const temps: string[] = [];
  const folders = [root];
  while (folders.length > 0) {
    const dir = folders.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue; // gone or unreadable: nothing of ours to recover there
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && !SKIP.has(entry.name)) folders.push(path);
      else if (entry.isFile() && JOURNAL.test(entry.name)) journals.push(path);
      else if (entry.isFile() && STAGED.test(entry.name)) temps.push(path);
    }
  }
  const oldEnough = async (path: string) => Date.now() - (await stat(path)).mtimeMs >= minAgeMs;
  for (const path of journals) {
    if (!(await oldEnough(path).catch(() => false))) continue;
    const journal = JSON.parse(await readFile(path, 'utf8')) as Journal;
    await rollForward(journal);
    await unlink(path);
    result.rolledForward++;
  }
  for (const path of temps) {
    if (!(await oldEnough(path).catch(() => false))) continue;
    await unlink(path).catch(() => undefined);
    result.removedTemps++;
  }
  return result;
}

/** Where a change's journal goes: beside its first file (so it sits inside the workspace). */
export function journalDir(paths: readonly string[]): string {
  return dirname(paths[0]);
}
