import { Injectable } from '@nestjs/common';
import { AgentTool } from '../agent-tool.decorator';
import { commitChanges, describePlanned, type PlannedChange } from '../fs/file-change-plan';
import { readTextFile } from '../fs/text-file';
import { applyHunks } from '../patch/hunk-applier';
import { parseUnifiedDiff, type FilePatch } from '../patch/unified-diff-parser';
import { toWorkspaceRelative } from '../fs/workspace-paths';
import { openIfExists } from '../path-guard';
import { ToolError, jsonSchemaOf, type Tool, type ToolContext, type ToolResult } from '../tool';
import { Type, type Static } from 'typebox';

const ApplyPatchArgs = Type.Object(
  {
    patch: Type.String({
      minLength: 1,
      description:
        'The unified diff, with "--- a/path" and "+++ b/path" headers and "@@ -l,n +l,n @@" hunks.',
    }),
    dry_run: Type.Optional(
      Type.Boolean({ description: 'Only report what would change; write nothing (default false).' }),
    ),
  },
  { additionalProperties: false },
);
export type ApplyPatchArgs = Static<typeof ApplyPatchArgs>;

/** A file's state while the patch is worked out in memory; several file sections may touch the same file. */
interface Draft {
  path: string;
  absPath: string;
  before: Buffer | null;
  text: string | null;
  mode?: number;
  added: number;
  removed: number;
}

@Injectable()
@AgentTool()
export class ApplyPatchTool implements Tool<ApplyPatchArgs> {
  readonly name = 'apply_patch';
  readonly kind = 'write';
  readonly description =
    'Apply a unified diff (as produced by `diff -u` or `git diff`) to one or more workspace files. Context lines must match the files exactly; hunks may sit at other line numbers than their headers say. Create a file with "--- /dev/null", delete one with "+++ /dev/null". All or nothing: if any hunk does not apply, no file is changed and the answer says which hunk and why. dry_run checks the patch without writing.';
  readonly parameters = jsonSchemaOf(ApplyPatchArgs);

  async describeForApproval(args: ApplyPatchArgs, ctx: Pick<ToolContext, 'workspaceRoot'>): Promise<string> {
    const title = args.dry_run ? 'apply_patch (dry run: nothing will be written)' : 'apply_patch';
    return describePlanned(title, async () =>
      (await this.plan(args.patch, ctx.workspaceRoot)).map(toPlannedChange),
    );
  }

  async execute(args: ApplyPatchArgs, ctx: ToolContext): Promise<ToolResult> {
    const drafts = await this.plan(args.patch, ctx.workspaceRoot);
    const summary = drafts.map(describeDraft).join('\n');
    if (args.dry_run) return { content: `Dry run: the patch applies cleanly. It would change:\n${summary}` };
    const changes = await commitChanges(ctx.workspaceRoot, drafts.map(toPlannedChange));
    return { content: `Applied the patch:\n${summary}`, changes };
  }

  /** Works out every file's new content; throws (nothing written) if any hunk fails. */
  private async plan(patch: string, root: string): Promise<Draft[]> {
    const drafts = new Map<string, Draft>();
    const failures: string[] = [];
    for (const file of parseUnifiedDiff(patch)) {
      try {
        const failure = await this.planFile(root, file, drafts);
        if (failure !== null) failures.push(failure);
      } catch (err) {
        if (!(err instanceof ToolError)) throw err;
        failures.push(err.message); // e.g. a path outside the workspace: reported with the rest.
      }
    }
    if (failures.length > 0) {
      throw new ToolError(
        'CONFLICT',
        `The patch does not apply; no file was changed.\n${failures.join('\n')}\nFix these hunks and send the whole patch again.`,
      );
    }
    return [...drafts.values()].filter(isChange);
  }

  private async planFile(root: string, file: FilePatch, drafts: Map<string, Draft>): Promise<string | null> {
    const source = file.oldPath === null ? null : await draftFor(root, file.oldPath, drafts);
    const targetPath = file.newPath ?? file.oldPath;
    if (targetPath === null) return 'A file section has /dev/null on both sides.';
    const target = file.newPath === null ? source : await draftFor(root, file.newPath, drafts);
    if (source !== null && source.text === null) {
      return `${source.path}: does not exist (or is deleted earlier in this patch).`;
    }
    if (target === null) return `${targetPath}: does not exist.`;
    if (target !== source && target.text !== null) {
      return `${target.path}: already exists; the patch would create it.`;
    }

    const result = applyHunks(source?.text ?? '', file.hunks);
    if (!result.ok) {
      const hunk = file.hunks[result.hunk - 1];
      return `${source?.path ?? target.path}: hunk ${result.hunk} (${hunk?.header ?? '@@'}) does not apply: ${result.reason}.`;
    }
    for (const hunk of file.hunks) {
      for (const line of hunk.lines) {
        if (line.op === '+') target.added++;
        if (line.op === '-') target.removed++;
      }
    }
    if (file.newPath === null) {
      if (result.text !== '') {
        return `${target.path}: the patch deletes the file but does not remove all of its lines.`;
      }
      target.text = null;
      return null;
    }
    if (source !== null && source !== target) source.text = null; // A rename: the old path goes away.
    target.text = result.text;
    target.mode ??= source?.mode;
    return null;
  }
}

/** The file's current state in this patch: from an earlier section, else from disk (text null: absent). */
async function draftFor(root: string, userPath: string, drafts: Map<string, Draft>): Promise<Draft> {
  const { path: absPath, file: opened } = await openIfExists(root, userPath);
  const known = drafts.get(absPath);
  if (known) {
    await opened?.handle.close();
    return known;
  }
  const path = toWorkspaceRelative(root, absPath);
  let draft: Draft = { path, absPath, before: null, text: null, added: 0, removed: 0 };
  if (opened !== null) {
    const file = await readTextFile(opened, path);
    draft = { ...draft, before: file.bytes, text: file.text, mode: file.mode };
  }
  drafts.set(absPath, draft);
  return draft;
}

function isChange(draft: Draft): boolean {
  if (draft.before === null) return draft.text !== null;
  return draft.text === null || draft.before.toString('utf8') !== draft.text;
}

function toPlannedChange(draft: Draft): PlannedChange {
  return {
    path: draft.path,
    absPath: draft.absPath,
    before: draft.before,
    after: draft.text === null ? null : Buffer.from(draft.text, 'utf8'),
    mode: draft.mode,
  };
}

function describeDraft(draft: Draft): string {
  const counts = `(+${draft.added} -${draft.removed})`;
  if (draft.before === null) return `  created ${draft.path} ${counts}`;
  if (draft.text === null) return `  deleted ${draft.path}`;
  return `  modified ${draft.path} ${counts}`;
}
