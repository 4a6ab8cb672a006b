import { constants, existsSync } from 'node:fs';
import { lstat, mkdir, open, readdir, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolError } from '../tool';
import { errnoCode } from './errno';

/**
 * Folders held open, so that a path is looked up in the folder that was checked rather than in
 * whatever a concurrent process has put at that folder's name since.
 *
 * Node has no openat(), but on Linux `/proc/self/fd/<fd>/<name>` is resolved through the held
 * folder exactly as openat(fd, name) is: the `/proc/self/fd/<fd>` step is the held folder itself,
 * not a name looked up again. Every file tool goes one name at a time from a held folder, opening
 * folders with O_DIRECTORY | O_NOFOLLOW, so a folder swapped for a symbolic link is seen as a link
 * (and judged) instead of being followed. Names given here are single path segments, never `..`.
 */

/** A folder opened to look names up in. */
export const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

let available: boolean | undefined;

/** The file tools resolve paths through /proc/self/fd; where it is missing they refuse, clearly. */
export function assertHeldDirsAvailable(): void {
  available ??= process.platform === 'linux' && existsSync('/proc/self/fd');
  if (!available) {
    throw new ToolError(
      'EXECUTION_ERROR',
      `The file tools need Linux with /proc mounted (they resolve every path through /proc/self/fd so that a concurrent change cannot lead them outside the workspace); this server runs on ${process.platform} without it.`,
    );
  }
}

/**
 * A folder to look a name up in: one held open, or the workspace root by its real path. The root is
 * the one path followed as given (see `openRoot`): a lookup by its path finds the folder a handle
 * opened on it would hold, as nothing in the workspace can change the path above it, so the path
 * guard looks its first name up there directly instead of opening the root first — under load each
 * file-system call waits for a turn of the event loop. Every folder below the root is held.
 */
export type Folder = FileHandle | string;

/** The path of `name` looked up inside the folder (`''`: the folder itself). */
export function at(dir: Folder, name = ''): string {
  if (typeof dir === 'string') return name === '' ? dir : join(dir, name);
  return name === '' ? `/proc/self/fd/${dir.fd}` : `/proc/self/fd/${dir.fd}/${name}`;
}

/** Opens the workspace root (a real path the server chose; the only path followed as given). */
export async function openRoot(root: string): Promise<FileHandle> {
  assertHeldDirsAvailable();
  try {
    return await open(root, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') throw new ToolError('NOT_FOUND', 'the workspace folder does not exist.');
    throw err;
  }
}

/** What a name in a held folder turned out to be when opened as a folder. */
export type ChildDir =
  { kind: 'dir'; handle: FileHandle } | { kind: 'link' | 'other' | 'missing' | 'denied' };

/**
 * Opens `name` inside `dir` as a folder without following a link. A symbolic link answers ENOTDIR
 * (or ELOOP) to O_DIRECTORY | O_NOFOLLOW, like a file does; lstat tells them apart.
 */
export async function openChildDir(dir: Folder, name: string): Promise<ChildDir> {
  for (let attempt = 0; ; attempt++) {
    try {
      return { kind: 'dir', handle: await open(at(dir, name), DIR_FLAGS) };
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ENOENT') return { kind: 'missing' };
      if (code === 'EACCES' || code === 'EPERM') return { kind: 'denied' };
      if (code !== 'ENOTDIR' && code !== 'ELOOP') throw err;
    }
    try {
      const stats = await lstat(at(dir, name));
      if (stats.isSymbolicLink()) return { kind: 'link' };
      // A folder again: swapped back between the two calls; look once more (bounded).
      if (!stats.isDirectory() || attempt >= 3) return { kind: 'other' };
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return { kind: 'missing' };
      throw err;
    }
  }
}

/**
 * Closes held folders, all at once (one wait); a close that fails has nothing left to protect. The
 * root by its path holds nothing to close.
 */
export async function closeAll(handles: readonly Folder[]): Promise<void> {
  const held = handles.filter((handle): handle is FileHandle => typeof handle !== 'string');
  await Promise.all(held.map((handle) => handle.close().catch(() => undefined)));
}

/**
 * Closes `handles` without waiting: a close changes no answer, and each awaited file-system call
 * costs a turn of the event loop — under load, milliseconds of every tool call.
 */
export function closeInBackground(...handles: readonly Folder[]): void {
  void closeAll(handles);
}

/**
 * Opens the folders `names` one below the other from `start` (not included in the answer, which
 * the caller closes). `create`: a missing folder is made first — in the held folder above it.
 * Anything that is not a real folder now (a link swapped in, a file) stops it: `path` names the
 * change in the error.
 */
export async function openFolderChain(
  start: FileHandle,
  names: readonly string[],
  path: string,
  create = false,
): Promise<FileHandle[]> {
  const opened: FileHandle[] = [];
  try {
    for (const name of names) {
      const dir = opened.length === 0 ? start : opened[opened.length - 1];
      let child = await openChildDir(dir, name);
      if (child.kind === 'missing' && create) {
        await mkdir(at(dir, name)).catch((err: unknown) => {
          if (errnoCode(err) !== 'EEXIST') throw err;
        });
        child = await openChildDir(dir, name);
      }
      if (child.kind === 'dir') {
        opened.push(child.handle);
        continue;
      }
      if (child.kind === 'missing') {
        throw Object.assign(new Error(`${path}: ${name} does not exist`), { code: 'ENOENT' });
      }
      throw new ToolError(
        'PERMISSION_DENIED',
        `${path}: ${name} is no longer a folder of the workspace (changed meanwhile); nothing was written through it.`,
      );
    }
    return opened;
  } catch (err) {
    await closeAll(opened);
    throw err;
  }
}

/** A workspace-relative `/`-separated path as its folder names and its own name. */
export function splitRelative(rel: string): { folders: string[]; name: string } {
  const parts = rel.split('/');
  const name = parts.pop() ?? '';
  return { folders: parts, name };
}

/**
 * Removes `name` from the held folder and, when it is a folder, everything in it — each folder
 * opened from the one above it, so a folder swapped for a link meanwhile is removed as a link,
 * never followed (`rm -r` by path would empty the link's target).
 */
export async function removeBelow(parent: FileHandle, name: string): Promise<void> {
  const ignoreMissing = (err: unknown): void => {
    if (errnoCode(err) !== 'ENOENT') throw err;
  };
  const child = await openChildDir(parent, name);
  if (child.kind === 'missing') return;
  if (child.kind !== 'dir') {
    await unlink(at(parent, name)).catch(ignoreMissing);
    return;
  }
  try {
    for (const entry of await readdir(at(child.handle))) await removeBelow(child.handle, entry);
  } finally {
    await child.handle.close();
  }
  await rmdir(at(parent, name)).catch(ignoreMissing);
}
