import { constants, type Stats } from 'node:fs';
import { lstat, open, readlink, stat, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { errnoCode } from './fs/errno';
import {
  assertHeldDirsAvailable,
  at,
  closeAll,
  closeInBackground,
  openChildDir,
  type Folder,
} from './fs/held-dir';
import { ToolError } from './tool';
import {
  assertOrdinary,
  isInside,
  lexicalPath,
  OutsideWorkspaceError,
  segmentsOf,
} from './fs/workspace-paths';

export interface ResolveOptions {
  /** Refuse a path that does not exist (NOT_FOUND). The default unless `allowCreate`. */
  mustExist?: boolean;
  /**
   * Accept a path that does not exist yet, as long as its nearest existing ancestor is a real folder
   * inside the root; the returned path is that ancestor's real path plus the missing segments.
   */
  allowCreate?: boolean;
}

/**
 * Where a path of the workspace leads, found one name at a time from the held root folder
 * (fs/held-dir.ts): every folder on the way is held open and the next name is looked up in it, so
 * what a concurrent process renames, swaps or links meanwhile can change which file is found, never
 * lead outside. A symbolic link is read and judged like a path the model gave: followed inside the
 * root, refused when it leads out.
 */
export interface Located {
  /** The real absolute path. */
  path: string;
  /**
   * The folders from the root (by its path) down, those below it held; the last one holds the
   * target (or is it, for the root itself).
   */
  dirs: Folder[];
  /** The target's name in the last held folder; '' for the root itself or a missing target. */
  name: string;
  /** Of the target itself (never a link: links are followed); null when it does not exist yet. */
  stats: Stats | null;
  /** Closes the held folders. */
  release(): Promise<void>;
}

/** As many links as Linux follows in one lookup. */
const MAX_LINKS = 40;

/**
 * The one gate between a model-supplied path and the file system. `root` is the workspace's real
 * path (ToolContext.workspaceRoot is one). Returns the real absolute path inside it, or throws a
 * ToolError. Symbolic links are resolved everywhere along the path, so a link anywhere that leads
 * out is refused; device files, sockets and FIFOs are refused because reading one can block forever
 * or touch hardware. The path is only a name for the answer: tools that read or write use
 * `locateInWorkspace` / `openInWorkspace` and act through the held folders.
 */
export async function resolveInWorkspace(
  root: string,
  userPath: string,
  options: ResolveOptions = {},
): Promise<string> {
  const located = await locateInWorkspace(root, userPath, options);
  await located.release();
  return located.path;
}

export function locateInWorkspace(
  root: string,
  userPath: string,
  options: ResolveOptions = {},
): Promise<Located> {
  return locate(root, userPath, options, false);
}

/** What `locate` found, and with `open`, the target opened for reading when it is a file or folder. */
interface LocatedOpen extends Located {
  opened: OpenedFile | null;
}

/**
 * `open`: the last name is opened for reading (READ_FLAGS) instead of looked at first, and its
 * kind judged on the open file — two calls instead of three. A link, a missing name or anything
 * open refuses (a socket) is then looked at as without `open`.
 */
async function locate(
  root: string,
  userPath: string,
  options: ResolveOptions,
  open: boolean,
): Promise<LocatedOpen> {
  const allowCreate = options.allowCreate ?? false;
  const mustExist = options.mustExist ?? !allowCreate;
  if (typeof userPath !== 'string' || userPath.trim() === '') {
    throw new ToolError('INVALID_ARGUMENTS', 'path: must be a non-empty path relative to the workspace.');
  }
  if (userPath.includes('\0')) {
    throw new ToolError('INVALID_ARGUMENTS', 'path: must not contain NUL bytes.');
  }
  assertHeldDirsAvailable();
  const pending = segmentsOf(root, lexicalPath(root, userPath));
  const dirs: Folder[] = [root];
  const names: string[] = [];
  const located = (
    name: string,
    stats: Stats | null,
    missing: string[] = [],
    opened: FileHandle | null = null,
  ): LocatedOpen => ({
    path: join(root, ...names, ...missing),
    dirs,
    name,
    stats,
    release: () => closeAll(dirs),
    opened: opened === null ? null : { path: join(root, ...names), handle: opened, stats: stats! },
  });
  try {
    let links = 0;
    /** While `pending` is longer than this, its first names come from a link's target. */
    let linkFloor = -1;
    while (pending.length > 0) {
      const fromLink = linkFloor >= 0 && pending.length > linkFloor;
      if (!fromLink) linkFloor = -1;
      const name = pending.shift()!;
      if (name === '.') continue;
      if (name === '..') {
        // Only a link's target climbs (the model's path was resolved lexically): never above the root.
        if (names.length === 0) throw leadsOutside(userPath);
        names.pop();
        await closeAll([dirs.pop()!]);
        continue;
      }
      const dir = dirs[dirs.length - 1];
      let kind: 'link' | 'missing' | 'other';
      let stats: Stats | null = null;
      if (pending.length > 0) {
        const child = await openChildDir(dir, name);
        if (child.kind === 'dir') {
          dirs.push(child.handle);
          names.push(name);
          continue;
        }
        if (child.kind === 'denied') {
          throw new ToolError('PERMISSION_DENIED', `${userPath}: the server may not access it.`);
        }
        kind = child.kind;
      } else {
        const opened = open ? await openName(dir, name, userPath) : null;
        if (opened !== null) {
          names.push(name);
          return located(name, opened.stats, [], opened.handle);
        }
        stats = await lstat(at(dir, name)).catch((err: unknown) => {
          if (errnoCode(err) === 'ENOENT') return null;
          throw err;
        });
        kind = stats === null ? 'missing' : stats.isSymbolicLink() ? 'link' : 'other';
      }
      if (kind === 'link') {
        if (++links > MAX_LINKS)
          throw new ToolError('PERMISSION_DENIED', `${userPath}: symbolic links loop.`);
        const target = await readlink(at(dir, name)).catch((err: unknown) => {
          const code = errnoCode(err);
          if (code === 'EINVAL' || code === 'ENOENT') return null; // no longer a link: look at the name again
          throw err;
        });
        if (target === null) {
          pending.unshift(name);
          continue;
        }
        linkFloor = linkFloor < 0 ? pending.length : Math.min(linkFloor, pending.length);
        if (isAbsolute(target)) {
          const abs = resolve(target);
          if (!isInside(root, abs)) throw leadsOutside(userPath);
          await closeAll(dirs.splice(1));
          names.length = 0;
          pending.unshift(...segmentsOf(root, abs));
        } else {
          pending.unshift(...target.split('/').filter((part) => part !== ''));
        }
        continue;
      }
      if (kind === 'missing') {
        if (fromLink && !mustExist) {
          throw new ToolError(
            'PERMISSION_DENIED',
            `${userPath}: passes through a symbolic link whose target does not exist; refusing to create through it.`,
          );
        }
        if (mustExist) {
          throw new ToolError('NOT_FOUND', `${userPath}: no such file or folder in the workspace.`);
        }
        return located('', null, [name, ...pending]);
      }
      // The last name, or a name on the way that is not a folder.
      if (pending.length > 0) {
        if (mustExist) {
          throw new ToolError('NOT_FOUND', `${userPath}: no such file or folder in the workspace.`);
        }
        throw new ToolError(
          'INVALID_ARGUMENTS',
          `${userPath}: cannot be created because ${[...names, name].join('/')} is a file, not a folder.`,
        );
      }
      assertOrdinary(stats!, userPath);
      names.push(name);
      return located(name, stats);
    }
    const last = dirs[dirs.length - 1];
    return located('', typeof last === 'string' ? await stat(last) : await last.stat());
  } catch (err) {
    await closeAll(dirs);
    if (err instanceof ToolError) throw err;
    const code = errnoCode(err);
    if (code === 'EACCES' || code === 'EPERM') {
      throw new ToolError('PERMISSION_DENIED', `${userPath}: the server may not access it.`);
    }
    throw err;
  }
}

/** A file (or folder) of the workspace, open for reading. */
export interface OpenedFile {
  /** Its real path. */
  path: string;
  handle: FileHandle;
  /** Of the open file itself. */
  stats: Stats;
}

const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | constants.O_NOCTTY;

/**
 * Opens the last name in `dir` for reading, judged on the open file: null when it is a link, missing
 * or refuses to open (a socket), for the caller to look at. A FIFO or a device is closed at once and
 * refused: O_NONBLOCK keeps a FIFO from holding the open, O_NOCTTY a terminal from becoming ours.
 */
async function openName(
  dir: Folder,
  name: string,
  userPath: string,
): Promise<{ handle: FileHandle; stats: Stats } | null> {
  let handle: FileHandle;
  try {
    handle = await open(at(dir, name), READ_FLAGS);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ELOOP' || code === 'ENOENT' || code === 'ENXIO') return null;
    throw err;
  }
  try {
    const stats = await handle.stat();
    assertOrdinary(stats, userPath);
    return { handle, stats };
  } catch (err) {
    closeInBackground(handle);
    throw err;
  }
}

/**
 * Opens what `userPath` names for reading, from the folder that holds it (held since the checks), so
 * that nothing swapped in after them is read: O_NOFOLLOW refuses a symbolic link put in the file's
 * place, O_NONBLOCK keeps a FIFO put there from holding the open, and the kind is judged again on
 * the open file. The caller closes the handle.
 */
export async function openInWorkspace(root: string, userPath: string): Promise<OpenedFile> {
  const { file } = await openIfExists(root, userPath, { mustExist: true });
  return file!;
}

/**
 * Like openInWorkspace, for a file that may not exist yet: `file` is then null and `path` is where
 * it would be created.
 */
export async function openIfExists(
  root: string,
  userPath: string,
  options: ResolveOptions = { allowCreate: true },
): Promise<{ path: string; file: OpenedFile | null }> {
  const located = await locate(root, userPath, options, true);
  if (located.opened !== null) {
    // The folders that led to it are no longer needed.
    closeInBackground(...located.dirs);
    return { path: located.path, file: located.opened };
  }
  // The root itself, a missing file, or a name that changed kind while it was looked at.
  let handle: FileHandle;
  try {
    if (located.stats === null) return { path: located.path, file: null };
    const dir = located.dirs[located.dirs.length - 1];
    // The root itself: a new handle on the held folder.
    handle = await open(at(dir, located.name), located.name === '' ? constants.O_RDONLY : READ_FLAGS);
  } catch (err) {
    // A link put in the file's place since the check; anything else is an ordinary file-system error.
    if (errnoCode(err) === 'ELOOP') {
      throw new ToolError('PERMISSION_DENIED', `${userPath}: became a symbolic link while being opened.`);
    }
    // Removed since the check: a file still to be created, when creating is allowed.
    if (errnoCode(err) === 'ENOENT' && options.allowCreate === true) {
      return { path: located.path, file: null };
    }
    throw err;
  } finally {
    // The file is open: the folders that led to it are no longer needed.
    closeInBackground(...located.dirs);
  }
  try {
    const stats = await handle.stat();
    assertOrdinary(stats, userPath);
    return { path: located.path, file: { path: located.path, handle, stats } };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** The kind and size of what a path names (links followed inside), without opening it. */
export async function statInWorkspace(
  root: string,
  userPath: string,
): Promise<{ path: string; stats: Stats }> {
  const located = await locateInWorkspace(root, userPath);
  await located.release();
  return { path: located.path, stats: located.stats! };
}

function leadsOutside(userPath: string): ToolError {
  return new OutsideWorkspaceError(userPath);
}
