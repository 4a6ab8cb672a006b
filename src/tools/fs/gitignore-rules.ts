import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import ignore, { type Ignore } from 'ignore';
import { at } from './held-dir';

/** A .gitignore larger than this is not a real one; skipping it beats stalling a walk. */
const MAX_GITIGNORE_BYTES = 256 * 1024;

interface Layer {
  /** Workspace-relative folder the rules belong to ('' for the root). */
  base: string;
  rules: Ignore;
}

/** The .gitignore files that apply inside one folder: its own and every ancestor's, each relative to where it lives. */
export class GitignoreRules {
  private constructor(private readonly layers: readonly Layer[]) {}

  static empty(): GitignoreRules {
    return new GitignoreRules([]);
  }

  /** These rules plus the .gitignore in the held folder `dir` (workspace-relative `relDir`), if it has one. */
  async enter(dir: FileHandle, relDir: string): Promise<GitignoreRules> {
    let handle: FileHandle;
    try {
      // A symlinked .gitignore could point outside the workspace: ignore it rather than read through it.
      handle = await open(
        at(dir, '.gitignore'),
        constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      );
    } catch {
      return this;
    }
    try {
      const stats = await handle.stat();
      if (!stats.isFile() || stats.size > MAX_GITIGNORE_BYTES) return this;
      const rules = ignore().add(await handle.readFile('utf8'));
      return new GitignoreRules([...this.layers, { base: relDir, rules }]);
    } catch {
      return this;
    } finally {
      await handle.close();
    }
  }

  ignores(relPath: string, isDirectory: boolean): boolean {
    return this.layers.some(({ base, rules }) => {
      if (base !== '' && !relPath.startsWith(`${base}/`)) return false;
      const local = base === '' ? relPath : relPath.slice(base.length + 1);
      return local !== '' && rules.ignores(isDirectory ? `${local}/` : local);
    });
  }
}
