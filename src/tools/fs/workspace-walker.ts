import { readdir, realpath, stat } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { isInside, specialKind, toWorkspaceRelative } from '../path-guard';
import { GitignoreRules } from './gitignore-rules';

/**
 * `link-outside`: a symbolic link leading out of the workspace, never followed.
 * `special`: a FIFO, socket, device or dangling link, never opened (opening a FIFO blocks).
 */
export type WalkEntryKind = 'file' | 'directory' | 'link-outside' | 'special';

export interface WalkEntry {
  /** Workspace-relative, `/`-separated. */
  path: string;
  /** Real path for files and folders (also when reached through an inside link). */
  absPath: string;
  kind: WalkEntryKind;
  isLink: boolean;
  /** 1 for the start folder's own entries. */
  depth: number;
}

export interface WalkOptions {
  /** Real path of the workspace root. */
  root: string;
  /** Real path of the folder to walk, inside the root. */
  start: string;
  maxDepth: number;
  includeHidden: boolean;
  respectGitignore: boolean;
  signal?: AbortSignal;
}

/**
 * Depth-first, name-sorted walk that never leaves the workspace. Links are resolved but linked
 * folders are not entered: inside the root their content is reachable anyway, and not entering them
 * rules out cycles. `.git` is never entered.
 */
export async function* walkWorkspace(options: WalkOptions): AsyncGenerator<WalkEntry> {
  const rules = options.respectGitignore
    ? await rulesDownTo(options.root, options.start)
    : GitignoreRules.empty();
  yield* walkFolder(options, options.start, toWorkspaceRelative(options.root, options.start), 1, rules);
}

async function* walkFolder(
  options: WalkOptions,
  absDir: string,
  relDir: string,
  depth: number,
  rules: GitignoreRules,
): AsyncGenerator<WalkEntry> {
  options.signal?.throwIfAborted();
  let dirents: Dirent[];
  try {
    dirents = await readdir(absDir, { withFileTypes: true });
  } catch {
    return; // An unreadable folder is skipped, not fatal: the rest of the walk is still useful.
  }
  dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const dirent of dirents) {
    const name = dirent.name;
    if (name.startsWith('.') && !options.includeHidden) continue;
    const path = relDir === '.' ? name : `${relDir}/${name}`;
    const entry = await classify(options.root, join(absDir, name), path, depth, dirent);
    if (options.respectGitignore && rules.ignores(path, entry.kind === 'directory')) continue;
    yield entry;
    if (entry.kind === 'directory' && !entry.isLink && name !== '.git' && depth < options.maxDepth) {
      const inner = options.respectGitignore ? await rules.enter(entry.absPath, path) : rules;
      yield* walkFolder(options, entry.absPath, path, depth + 1, inner);
    }
  }
}

async function classify(
  root: string,
  absPath: string,
  path: string,
  depth: number,
  dirent: Dirent,
): Promise<WalkEntry> {
  if (!dirent.isSymbolicLink()) {
    const kind: WalkEntryKind = dirent.isDirectory() ? 'directory' : dirent.isFile() ? 'file' : 'special';
    return { path, absPath, kind, isLink: false, depth };
  }
  try {
    const real = await realpath(absPath);
    if (!isInside(root, real)) return { path, absPath, kind: 'link-outside', isLink: true, depth };
    const stats = await stat(real);
    const kind: WalkEntryKind =
      specialKind(stats) !== null ? 'special' : stats.isDirectory() ? 'directory' : 'file';
    return { path, absPath: real, kind, isLink: true, depth };
  } catch {
    return { path, absPath, kind: 'special', isLink: true, depth };
  }
}

/** The .gitignore files of the root and of every folder down to `start`, which apply to what lies below. */
async function rulesDownTo(root: string, start: string): Promise<GitignoreRules> {
  let rules = await GitignoreRules.empty().enter(root, '');
  const parts = relative(root, start).split(sep).filter(Boolean);
  for (let i = 0; i < parts.length; i++) {
    rules = await rules.enter(join(root, ...parts.slice(0, i + 1)), parts.slice(0, i + 1).join('/'));
  }
  return rules;
}
