import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import ignore, { type Ignore } from 'ignore';

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

  /** These rules plus the .gitignore in `absDir` (workspace-relative `relDir`), if it has one. */
  async enter(absDir: string, relDir: string): Promise<GitignoreRules> {
    const file = join(absDir, '.gitignore');
    try {
      const stats = await lstat(file);
      // A symlinked .gitignore could point outside the workspace: ignore it rather than read through it.
      if (!stats.isFile() || stats.size > MAX_GITIGNORE_BYTES) return this;
      const rules = ignore().add(await readFile(file, 'utf8'));
      return new GitignoreRules([...this.layers, { base: relDir, rules }]);
    } catch {
      return this;
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
