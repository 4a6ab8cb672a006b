import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { at, closeAll, openFolderChain, openRoot, splitRelative } from './held-dir';

/** A file written next to its target, waiting to be renamed into place. */
export interface StagedWrite {
  /** Workspace-relative, `/`-separated (as a journal records it). */
  readonly target: string;
  /** The staged file, renamed onto `target` by `commit`; workspace-relative too. */
  readonly temp: string;
  commit(): Promise<void>;
  discard(): Promise<void>;
  /** Lets go of the held folder without touching the staged file (a journal finishes it). */
  release(): Promise<void>;
}

/** O_EXCL: the name must be new, so nothing already there (a link included) is written through. */
const STAGE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Writes `data` to a temporary file in the target's folder (so the rename stays on one file system)
 * and flushes it. Nothing visible changes until `commit`, which is one rename: readers see the old
 * or the new file, never half of one, and a symlink put at the target is replaced, not followed.
 * The folder is reached from the root one name at a time and held open from the first mkdir to the
 * rename (fs/held-dir.ts), so the file lands in a folder of the workspace whatever is renamed meanwhile.
 */
export async function stageWrite(
  root: string,
  target: string,
  data: Buffer,
  mode?: number,
): Promise<StagedWrite> {
  const rootDir = await openRoot(root);
  try {
    return await stageWriteIn(rootDir, target, data, mode);
  } finally {
    await rootDir.close();
  }
}

/** stageWrite below a held folder; `target` is relative to it. */
export async function stageWriteIn(
  base: FileHandle,
  target: string,
  data: Buffer,
  mode?: number,
): Promise<StagedWrite> {
  const { folders, name } = splitRelative(target);
  const chain = await openFolderChain(base, folders, target, true);
  // The folder of the file is held (a duplicate handle when it is the base itself, which the caller closes).
  const dir = chain.pop() ?? (await open(at(base), constants.O_RDONLY | constants.O_DIRECTORY));
  await closeAll(chain);
  const tempName = `.${name.slice(0, 100)}.${randomBytes(6).toString('hex')}.tmp`;
  let released = false;
  const release = async (): Promise<void> => {
    if (released) return;
    released = true;
    await dir.close().catch(() => undefined);
  };
  try {
    const handle = await open(at(dir, tempName), STAGE_FLAGS, mode ?? 0o666);
    try {
      await handle.writeFile(data);
      await handle.datasync();
      // open() applies the umask; an existing file's permissions (e.g. an executable script) must survive.
      if (mode !== undefined) await handle.chmod(mode);
    } finally {
      await handle.close();
    }
  } catch (err) {
    await unlink(at(dir, tempName)).catch(() => undefined);
    await release();
    throw err;
  }
  return {
    target,
    temp: [...folders, tempName].join('/'),
    commit: async () => {
      await rename(at(dir, tempName), at(dir, name));
      await release();
    },
    discard: async () => {
      await unlink(at(dir, tempName)).catch(() => undefined);
      await release();
    },
    release,
  };
}

/** Writes `target` (workspace-relative) in one rename. */
export async function atomicWriteFile(
  root: string,
  target: string,
  data: Buffer,
  mode?: number,
): Promise<void> {
  const staged = await stageWrite(root, target, data, mode);
  try {
    await staged.commit();
  } catch (err) {
    await staged.discard();
    throw err;
  }
}
