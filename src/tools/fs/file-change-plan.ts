import { unlink, type FileHandle } from 'node:fs/promises';
import { createTwoFilesPatch } from 'diff';
import { capHead } from '../output-cap';
import { toWorkspaceRelative } from './workspace-paths';
import { ToolError, type FileChange } from '../tool';
import { errnoCode } from './errno';
import { stageWriteIn, type StagedWrite } from './atomic-write';
import { at, closeAll, openFolderChain, openRoot, splitRelative } from './held-dir';
import { openJournal } from './write-journal';
import { sha256 } from './sha256';

/**
 * One file a write tool means to change, worked out completely before anything is written: the same
 * plan renders the approval diff and is committed, so a person approves exactly what happens.
 */
export interface PlannedChange {
  /** Workspace-relative path, as the model and the person see it. */
  path: string;
  /** Real absolute path, from the path guard. */
  absPath: string;
  /** null: the file does not exist yet. */
  before: Buffer | null;
  /** null: the file is deleted. */
  after: Buffer | null;
  /** Permission bits to keep when rewriting. */
  mode?: number;
}

export function toFileChange(change: PlannedChange): FileChange {
  return {
    path: change.path,
    beforeSha256: change.before === null ? null : sha256(change.before),
    afterSha256: change.after === null ? null : sha256(change.after),
  };
}

/** A pause between the steps of a commit, for tests that kill the process mid-way. */
export interface CommitHooks {
  beforeStep?(step: number): Promise<void>;
}

/**
 * Writes every change or none: all new contents are staged (where a full disk or a permission
 * problem shows up) before the first rename, and deletions come last. A change of several files is
 * journaled first, so a crash between its renames is finished at the next start (write-journal.ts).
 * Every file is reached from `root` through held folders (held-dir.ts): what is renamed meanwhile
 * can make a step fail, never make it write outside the workspace.
 */
export async function commitChanges(
  root: string,
  changes: readonly PlannedChange[],
  hooks: CommitHooks = {},
): Promise<FileChange[]> {
  const staged: StagedWrite[] = [];
  const rootDir = await openRoot(root);
  try {
    try {
      for (const change of changes) {
        if (change.after === null) continue;
        staged.push(await stageWriteIn(rootDir, relativeTo(root, change), change.after, change.mode));
      }
    } catch (err) {
      await Promise.all(staged.map((write) => write.discard()));
      throw err;
    }
    const deletes = changes
      .filter((c) => c.after === null && c.before !== null)
      .map((c) => relativeTo(root, c));
    const steps = staged.length + deletes.length;
    const closeJournal =
      steps > 1
        ? await openJournal(root, {
            renames: staged.map((write) => [write.temp, write.target]),
            deletes,
          })
        : null;
    let step = 0;
    for (const write of staged) {
      await hooks.beforeStep?.(step++);
      await write.commit();
    }
    for (const path of deletes) {
      await hooks.beforeStep?.(step++);
      await unlinkBelow(rootDir, path);
    }
    await closeJournal?.();
    return changes.map(toFileChange);
  } finally {
    // A step that failed after the journal leaves its staged files to the journal's roll-forward.
    await Promise.all(staged.map((write) => write.release()));
    await rootDir.close();
  }
}

/** The change's real path below the root, `/`-separated (what the held-folder walk takes). */
function relativeTo(root: string, change: PlannedChange): string {
  const rel = toWorkspaceRelative(root, change.absPath);
  if (rel === '.' || rel.split('/').includes('..')) {
    throw new ToolError('INVALID_ARGUMENTS', `${change.path}: is not a file of the workspace.`);
  }
  return rel;
}

async function unlinkBelow(base: FileHandle, rel: string): Promise<void> {
  const { folders, name } = splitRelative(rel);
  const chain = await openFolderChain(base, folders, rel);
  try {
    await unlink(at(chain[chain.length - 1] ?? base, name));
  } finally {
    await closeAll(chain);
  }
}

/** Enough for a person to review; beyond it a change is too big to approve from a diff anyway. */
export const APPROVAL_DIFF_MAX_BYTES = 64 * 1024;

/** A unified diff of the plan for the approval prompt, capped so a huge rewrite stays readable. */
export function renderChangesDiff(
  changes: readonly PlannedChange[],
  maxBytes = APPROVAL_DIFF_MAX_BYTES,
): string {
  const parts = changes.map((change) => {
    const before = change.before?.toString('utf8') ?? '';
    const after = change.after?.toString('utf8') ?? '';
    const diff = createTwoFilesPatch(
      change.before === null ? '/dev/null' : `a/${change.path}`,
      change.after === null ? '/dev/null' : `b/${change.path}`,
      before,
      after,
      undefined,
      undefined,
      { context: 3 },
    );
    const body = diff.replace(/^=+\n/, '').replace(/\r$/gm, '');
    const crlf = /\r\n/.test(after) ? '(the file keeps its CRLF line endings)\n' : '';
    return crlf + body;
  });
  return capHead(parts.join('\n'), maxBytes).text;
}

/** For describeForApproval: a call that will fail says so instead of showing a diff. */
export async function describePlanned(
  title: string,
  plan: () => Promise<readonly PlannedChange[]>,
): Promise<string> {
  try {
    const changes = await plan();
    if (changes.length === 0) return `${title}\n(no change: the files already have this content)`;
    return `${title}\n${renderChangesDiff(changes)}`;
  } catch (err) {
    const reason =
      err instanceof ToolError
        ? err.message
        : `the files cannot be prepared (${errnoCode(err) ?? 'unexpected error'})`;
    return `${title}\nThis call will fail: ${reason}`;
  }
}
