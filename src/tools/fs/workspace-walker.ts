import { readdir, type FileHandle } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import { join } from 'node:path';
import { locateInWorkspace } from '../path-guard';
import { OutsideWorkspaceError, toWorkspaceRelative } from './workspace-paths';
import { ToolError } from '../tool';
import { GitignoreRules } from './gitignore-rules';
import { at, closeAll, openChildDir, openRoot } from './held-dir';

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
  /** The same, workspace-relative and `/`-separated: what is opened from the held root. */
  real: string;
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
 * rules out cycles. `.git` is never entered. Every folder is opened from the held one above it
 * (held-dir.ts): a folder swapped for a link between its listing and its entry is not entered.
 */
export async function* walkWorkspace(options: WalkOptions): AsyncGenerator<WalkEntry> {
  const startRel = toWorkspaceRelative(options.root, options.start);
  const parts = startRel === '.' ? [] : startRel.split('/');
  const held: FileHandle[] = [await openRoot(options.root)];
  try {
    let rules = options.respectGitignore
      ? await GitignoreRules.empty().enter(held[0], '')
      : GitignoreRules.empty();
    for (let i = 0; i < parts.length; i++) {
      const child = await openChildDir(held[held.length - 1], parts[i]);
      if (child.kind !== 'dir') {
        throw new ToolError(
          'PERMISSION_DENIED',
          `${startRel}: is no longer a folder of the workspace (changed meanwhile); try again.`,
        );
      }
      held.push(child.handle);
      if (options.respectGitignore) rules = await rules.enter(child.handle, parts.slice(0, i + 1).join('/'));
    }
    yield* walkFolder(options, held[held.length - 1], startRel, 1, rules);
  } finally {
    await closeAll(held);
  }
}

async function* walkFolder(
  options: WalkOptions,
  dir: FileHandle,
  relDir: string,
  depth: number,
  rules: GitignoreRules,
): AsyncGenerator<WalkEntry> {
  options.signal?.throwIfAborted();
  let dirents: Dirent[];
  try {
    dirents = await readdir(at(dir), { withFileTypes: true });
  } catch {
    return; // An unreadable folder is skipped, not fatal: the rest of the walk is still useful.
  }
  dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const dirent of dirents) {
    const name = dirent.name;
    if (name.startsWith('.') && !options.includeHidden) continue;
    const path = relDir === '.' ? name : `${relDir}/${name}`;
    const entry = await classify(options.root, path, depth, dirent);
    if (options.respectGitignore && rules.ignores(path, entry.kind === 'directory')) continue;
    yield entry;
    if (entry.kind === 'directory' && !entry.isLink && name !== '.git' && depth < options.maxDepth) {
      const child = await openChildDir(dir, name);
      if (child.kind !== 'dir') continue; // no longer a folder (a link swapped in): not entered
      try {
        const inner = options.respectGitignore ? await rules.enter(child.handle, path) : rules;
        yield* walkFolder(options, child.handle, path, depth + 1, inner);
      } finally {
        await child.handle.close();
      }
    }
  }
}

/** `path` is the entry's real workspace-relative path unless the entry is a link. */
async function classify(root: string, path: string, depth: number, dirent: Dirent): Promise<WalkEntry> {
  if (!dirent.isSymbolicLink()) {
    const kind: WalkEntryKind = dirent.isDirectory() ? 'directory' : dirent.isFile() ? 'file' : 'special';
    return { path, real: path, absPath: join(root, path), kind, isLink: false, depth };
  }
  const absPath = join(root, path);
  try {
    const located = await locateInWorkspace(root, path);
    await located.release();
    const stats = located.stats!;
    const kind: WalkEntryKind = stats.isDirectory() ? 'directory' : 'file';
    return {
      path,
      real: toWorkspaceRelative(root, located.path),
      absPath: located.path,
      kind,
      isLink: true,
      depth,
    };
  } catch (err) {
    const kind: WalkEntryKind = err instanceof OutsideWorkspaceError ? 'link-outside' : 'special';
    return { path, real: path, absPath, kind, isLink: true, depth };
  }
}
