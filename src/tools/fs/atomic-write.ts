import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** A file written next to its target, waiting to be renamed into place. */
export interface StagedWrite {
  readonly target: string;
  /** The staged file, renamed onto `target` by `commit`. */
  readonly temp: string;
  commit(): Promise<void>;
  discard(): Promise<void>;
}

/**
 * Writes `data` to a temporary file in the target's folder (so the rename stays on one file system)
 * and flushes it. Nothing visible changes until `commit`, which is one rename: readers see the old
 * or the new file, never half of one, and a symlink put at the target is replaced, not followed.
 */
export async function stageWrite(target: string, data: Buffer, mode?: number): Promise<StagedWrite> {
  const dir = dirname(target);
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.${basename(target).slice(0, 100)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', mode ?? 0o666);
  try {
    try {
      await handle.writeFile(data);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    // open() applies the umask; an existing file's permissions (e.g. an executable script) must survive.
    if (mode !== undefined) await chmod(temp, mode);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  return {
    target,
    temp,
    commit: () => rename(temp, target),
    discard: () => unlink(temp).catch(() => undefined),
  };
}

export async function atomicWriteFile(target: string, data: Buffer, mode?: number): Promise<void> {
  const staged = await stageWrite(target, data, mode);
  try {
    await staged.commit();
  } catch (err) {
    await staged.discard();
    throw err;
  }
}
