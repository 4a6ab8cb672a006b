import { constants, type Stats } from 'node:fs';
import { lstat, open, realpath, stat, type FileHandle } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { errnoCode } from './fs/errno';
import { ToolError } from './tool';

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
 * Whether `child` is `parent` itself or lies below it (both absolute and normalised). Judged on path
 * segments: `..data` is a name like any other, only a `..` segment leaves the parent.
 */
export function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** A path as the model should see it: relative to the root, `/`-separated, `.` for the root itself. */
export function toWorkspaceRelative(root: string, absolutePath: string): string {
  const rel = relative(root, absolutePath);
  if (rel === '') return '.';
  return sep === '/' ? rel : rel.split(sep).join('/');
}

/**
 * The one gate between a model-supplied path and the file system. `root` is the workspace's real
 * path (ToolContext.workspaceRoot is one). Returns the real absolute path inside it, or throws a
 * ToolError. Symbolic links are resolved everywhere along the path, so a link anywhere that leads
 * out is refused; device files, sockets and FIFOs are refused because reading one can block forever
 * or touch hardware.
 *
 * There is an unavoidable window between this check and the later open; writers narrow it by
 * renaming a temporary file into place, which replaces a link instead of following it, and
 * `openInWorkspace` narrows it for reads (what is put in the file's own place is not followed).
 */
export async function resolveInWorkspace(
  root: string,
  userPath: string,
  options: ResolveOptions = {},
): Promise<string> {
  const allowCreate = options.allowCreate ?? false;
  const mustExist = options.mustExist ?? !allowCreate;
  if (typeof userPath !== 'string' || userPath.trim() === '') {
    throw new ToolError('INVALID_ARGUMENTS', 'path: must be a non-empty path relative to the workspace.');
  }
  if (userPath.includes('\0')) {
    throw new ToolError('INVALID_ARGUMENTS', 'path: must not contain NUL bytes.');
  }
  const lexical = lexicalPath(root, userPath);
  // Asked together (one wait instead of two): stat follows the links realpath resolves, so both
  // describe the same file; its kind counts only once the real path is known to be inside.
  const [existing, stats] = await Promise.all([
    realpathOrMissing(lexical, userPath),
    stat(lexical).catch((err: unknown) => err as Error),
  ]);
  if (existing !== null) {
    assertInside(root, existing, userPath);
    if (stats instanceof Error) throw stats;
    assertOrdinary(stats, userPath);
    return existing;
  }
  if (mustExist) {
    throw new ToolError('NOT_FOUND', `${userPath}: no such file or folder in the workspace.`);
  }
  return resolveForCreate(root, lexical, userPath);
}

/** A file (or folder) of the workspace, open for reading. */
export interface OpenedFile {
  /** Its real path. */
  path: string;
  handle: FileHandle;
  /** Of the open file itself. */
  stats: Stats;
}

const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/**
 * Opens what `userPath` names for reading, after `resolveInWorkspace`'s checks, so that nothing
 * swapped in after them is read: O_NOFOLLOW refuses a symbolic link put in the file's place,
 * O_NONBLOCK keeps a FIFO put there from holding the open, and the kind is judged again on the open
 * file. The caller closes the handle.
 */
export async function openInWorkspace(root: string, userPath: string): Promise<OpenedFile> {
  const path = await resolveInWorkspace(root, userPath);
  let handle: FileHandle;
  try {
    handle = await open(path, READ_FLAGS);
  } catch (err) {
    // A link put in the file's place since the check; anything else is an ordinary file-system error.
    if (errnoCode(err) === 'ELOOP') {
      throw new ToolError('PERMISSION_DENIED', `${userPath}: became a symbolic link while being opened.`);
    }
    throw err;
  }
  try {
    const stats = await handle.stat();
    assertOrdinary(stats, userPath);
    return { path, handle, stats };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** Resolves `..` without touching the disk; anything that lands outside the root is refused. */
function lexicalPath(root: string, userPath: string): string {
  if (isAbsolute(userPath)) {
    const abs = resolve(userPath);
    if (isInside(root, abs)) return abs;
    throw new ToolError(
      'PERMISSION_DENIED',
      `${userPath}: is outside the workspace; use a path relative to it.`,
    );
  }
  const abs = resolve(root, userPath);
  if (!isInside(root, abs)) {
    throw new ToolError(
      'PERMISSION_DENIED',
      `${userPath}: leads outside the workspace; use a path inside it.`,
    );
  }
  return abs;
}

async function realpathOrMissing(path: string, userPath: string): Promise<string | null> {
  try {
    return await realpath(path);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    if (code === 'ELOOP') throw new ToolError('PERMISSION_DENIED', `${userPath}: symbolic links loop.`);
    if (code === 'EACCES' || code === 'EPERM') {
      throw new ToolError('PERMISSION_DENIED', `${userPath}: the server may not access it.`);
    }
    throw err;
  }
}

function assertInside(realRoot: string, realPath: string, userPath: string): void {
  if (!isInside(realRoot, realPath)) {
    throw new ToolError(
      'PERMISSION_DENIED',
      `${userPath}: a symbolic link leads outside the workspace; only files inside it are reachable.`,
    );
  }
}

function assertOrdinary(stats: Stats, userPath: string): void {
  const special = specialKind(stats);
  if (special !== null) {
    throw new ToolError(
      'PERMISSION_DENIED',
      `${userPath}: is a ${special}; only regular files and folders are allowed.`,
    );
  }
}

export function specialKind(stats: Stats): string | null {
  if (stats.isFIFO()) return 'FIFO (named pipe)';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'device file';
  return null;
}

/**
 * A path to be created: the nearest existing ancestor must be a real folder inside the root, and
 * nothing below it may exist — in particular not a dangling symlink, which a later write would
 * follow to wherever it points.
 */
async function resolveForCreate(realRoot: string, lexical: string, userPath: string): Promise<string> {
  const missing: string[] = [];
  let current = lexical;
  for (;;) {
    if (await existsWithoutFollowing(current)) {
      const real = await realpathOrMissing(current, userPath);
      if (real === null) {
        throw new ToolError(
          'PERMISSION_DENIED',
          `${userPath}: passes through a symbolic link whose target does not exist; refusing to create through it.`,
        );
      }
      assertInside(realRoot, real, userPath);
      const stats = await stat(real);
      if (!stats.isDirectory()) {
        throw new ToolError(
          'INVALID_ARGUMENTS',
          `${userPath}: cannot be created because ${toWorkspaceRelative(realRoot, real)} is a file, not a folder.`,
        );
      }
      return join(real, ...missing.reverse());
    }
    const parent = dirname(current);
    if (parent === current) throw new ToolError('NOT_FOUND', `${userPath}: no existing folder above it.`);
    missing.push(relative(parent, current));
    current = parent;
  }
}

async function existsWithoutFollowing(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw err;
  }
}
