import { createHash } from 'node:crypto';
import { mkdir, realpath, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { openRoot, removeBelow } from './fs/held-dir';
import { ToolError } from './tool';
import type { AppConfig } from '../config/app-config';

/**
 * Whose files a session's tools see (WORKSPACE_SCOPE): `shared`, one workspace for every key;
 * `key`, WORKSPACE_ROOT/<key name>; `session`, WORKSPACE_ROOT/<key name>/<session id>. Every tool
 * gets its session's folder as ToolContext.workspaceRoot, and the path guard and the command sandbox
 * keep it inside — so no key (or session) reaches another's files through any tool.
 */
export class Workspaces {
  constructor(private readonly config: Pick<AppConfig, 'workspaceRoot' | 'workspaceScope'>) {}

  /**
   * The folder of a session's tools, made on first use, as its real path (a run asks once and keeps
   * it): the path guard judges every path against it, so a link above it (a symlinked
   * WORKSPACE_ROOT) is resolved here rather than again on every call. Most runs find their folder
   * there already (with the `shared` and `key` scopes, always after the first): one call then.
   */
  async forSession(owner: string, sessionId: string): Promise<string> {
    const dir = this.pathFor(owner, sessionId);
    try {
      return await realpath(dir);
    } catch {
      await mkdir(dir, { recursive: true });
      return realpath(dir);
    }
  }

  /**
   * With WORKSPACE_SCOPE=session, a deleted session's folder goes with it — removed through held
   * folders, as a command of that session may still be renaming things in it.
   */
  async sessionDeleted(owner: string, sessionId: string): Promise<void> {
    if (this.config.workspaceScope !== 'session') return;
    const dir = this.pathFor(owner, sessionId);
    let parent: FileHandle;
    try {
      parent = await openRoot(dirname(dir));
    } catch (err) {
      if (err instanceof ToolError && err.code === 'NOT_FOUND') return;
      throw err;
    }
    try {
      await removeBelow(parent, basename(dir));
    } finally {
      await parent.close();
    }
  }

  private pathFor(owner: string, sessionId: string): string {
    switch (this.config.workspaceScope) {
      case 'shared':
        return this.config.workspaceRoot;
      case 'key':
        return join(this.config.workspaceRoot, folderName(owner));
      case 'session':
        return join(this.config.workspaceRoot, folderName(owner), folderName(sessionId));
    }
  }
}

/**
 * A key name as one folder name, and never the same folder for two names: plain names as they are;
 * anything else (`.`, `..`, a slash, spaces…) as `~` and a hash, which no plain name can equal.
 */
export function folderName(name: string): string {
  if (/^[A-Za-z0-9_-]{1,100}$/.test(name)) return name;
  return `~${createHash('sha256').update(name).digest('hex').slice(0, 32)}`;
}
