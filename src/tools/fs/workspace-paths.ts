import type { Stats } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { ToolError } from '../tool';

/**
 * The workspace's path arithmetic, which touches no disk: whether a path stays inside the root,
 * how the model sees it, and the kinds of file no tool reads or writes (path-guard.ts walks the
 * disk with these).
 */

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

/** Resolves `..` without touching the disk; anything that lands outside the root is refused. */
export function lexicalPath(root: string, userPath: string): string {
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

/** A path refused because a symbolic link on it leads out of the workspace. */
export class OutsideWorkspaceError extends ToolError {
  constructor(userPath: string) {
    super(
      'PERMISSION_DENIED',
      `${userPath}: a symbolic link leads outside the workspace; only files inside it are reachable.`,
    );
  }
}

/** The names from the root down to `abs` (inside it, normalised). */
export function segmentsOf(root: string, abs: string): string[] {
  return relative(root, abs)
    .split(sep)
    .filter((part) => part !== '');
}

/** Refuses a FIFO, a socket or a device: only regular files and folders are read or written. */
export function assertOrdinary(stats: Stats, userPath: string): void {
  const special = specialKind(stats);
  if (special !== null) {
    throw new ToolError(
      'PERMISSION_DENIED',
      `${userPath}: is a ${special}; only regular files and folders are allowed.`,
    );
  }
}

/** What kind of special file `stats` describes, or null for a regular file or a folder. */
export function specialKind(stats: Stats): string | null {
  if (stats.isFIFO()) return 'FIFO (named pipe)';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'device file';
  return null;
}
