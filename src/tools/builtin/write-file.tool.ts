import { Injectable } from '@nestjs/common';
import { AgentTool } from '../agent-tool.decorator';
import { commitChanges, describePlanned, type PlannedChange } from '../fs/file-change-plan';
import { detectLineEnding, matchLineEnding } from '../fs/line-endings';
import { EDIT_MAX_BYTES } from '../fs/text-file';
import { toWorkspaceRelative } from '../fs/workspace-paths';
import { openIfExists, type OpenedFile } from '../path-guard';
import { ToolError, jsonSchemaOf, type Tool, type ToolContext, type ToolResult } from '../tool';
import { Type, type Static } from 'typebox';

const WriteFileArgs = Type.Object(
  {
    path: Type.String({ description: 'File to write, relative to the workspace root.' }),
    content: Type.String({ description: 'The complete new content of the file.' }),
    overwrite: Type.Optional(
      Type.Boolean({ description: 'Replace the file if it exists (default false: refuse).' }),
    ),
  },
  { additionalProperties: false },
);
export type WriteFileArgs = Static<typeof WriteFileArgs>;

@Injectable()
@AgentTool()
export class WriteFileTool implements Tool<WriteFileArgs> {
  readonly name = 'write_file';
  readonly kind = 'write';
  readonly description =
    'Create a file with the given content, creating missing folders. An existing file is only replaced when overwrite is true; to change part of a file use edit_file or apply_patch instead. An existing file keeps its line endings (CRLF stays CRLF).';
  readonly parameters = jsonSchemaOf(WriteFileArgs);

  async describeForApproval(args: WriteFileArgs, ctx: Pick<ToolContext, 'workspaceRoot'>): Promise<string> {
    return describePlanned(
      `write_file ${args.path}${args.overwrite ? ' (overwrite allowed)' : ''}`,
      async () => [await this.plan(args, ctx.workspaceRoot)],
    );
  }

  async execute(args: WriteFileArgs, ctx: ToolContext): Promise<ToolResult> {
    const change = await this.plan(args, ctx.workspaceRoot);
    const changes = await commitChanges(ctx.workspaceRoot, [change]);
    const bytes = change.after?.length ?? 0;
    const verb = change.before === null ? 'Created' : 'Replaced';
    return {
      content: `${verb} ${change.path}: wrote ${bytes} bytes (sha256 ${changes[0]?.afterSha256 ?? ''}).`,
      changes,
    };
  }

  private async plan(args: WriteFileArgs, root: string): Promise<PlannedChange> {
    const { path: absPath, file } = await openIfExists(root, args.path);
    const path = toWorkspaceRelative(root, absPath);
    const existing = file === null ? null : await readExisting(file, path);
    if (existing === null) return { path, absPath, before: null, after: Buffer.from(args.content, 'utf8') };
    if (!args.overwrite) {
      throw new ToolError(
        'CONFLICT',
        `${path}: already exists (${existing.bytes.length} bytes). Set overwrite to true to replace it, or use edit_file to change part of it.`,
      );
    }
    const ending = detectLineEnding(existing.bytes.toString('utf8'));
    const after = Buffer.from(matchLineEnding(args.content, ending), 'utf8');
    return { path, absPath, before: existing.bytes, after, mode: existing.mode };
  }
}

/** The file to be replaced, read from its open handle (closed here). */
async function readExisting(file: OpenedFile, path: string): Promise<{ bytes: Buffer; mode: number }> {
  try {
    const { stats } = file;
    if (stats.isDirectory()) {
      throw new ToolError('INVALID_ARGUMENTS', `${path}: is a folder; give a file path.`);
    }
    if (stats.size > EDIT_MAX_BYTES) {
      throw new ToolError(
        'SIZE_LIMIT',
        `${path}: is ${stats.size} bytes; files above ${EDIT_MAX_BYTES} bytes cannot be replaced.`,
      );
    }
    return { bytes: await file.handle.readFile(), mode: stats.mode & 0o7777 };
  } finally {
    await file.handle.close();
  }
}
