import { Injectable } from '@nestjs/common';
import { AgentTool } from '../agent-tool.decorator';
import { walkWorkspace, type WalkEntry } from '../fs/workspace-walker';
import { toWorkspaceRelative } from '../fs/workspace-paths';
import { statInWorkspace } from '../path-guard';
import { ToolError, jsonSchemaOf, type Tool, type ToolContext, type ToolResult } from '../tool';
import { Type, type Static } from 'typebox';

const ListDirectoryArgs = Type.Object(
  {
    path: Type.Optional(
      Type.String({
        description: 'Folder to list, relative to the workspace root. Default: the root (".").',
      }),
    ),
    depth: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 10,
        description:
          'How many levels to list: 1 (default) lists only the folder itself, 2 also the folders inside it, and so on.',
      }),
    ),
    include_hidden: Type.Optional(
      Type.Boolean({ description: 'Also list names starting with "." (default false).' }),
    ),
  },
  { additionalProperties: false },
);
export type ListDirectoryArgs = Static<typeof ListDirectoryArgs>;

const MAX_ENTRIES = 1000;

@Injectable()
@AgentTool()
export class ListDirectoryTool implements Tool<ListDirectoryArgs> {
  readonly name = 'list_directory';
  readonly kind = 'read';
  readonly description =
    'List the files and folders in a workspace folder. Folders end with "/". Paths in the answer are relative to the workspace root and can be passed to the other tools as they are.';
  readonly parameters = jsonSchemaOf(ListDirectoryArgs);

  async execute(args: ListDirectoryArgs, ctx: ToolContext): Promise<ToolResult> {
    const root = ctx.workspaceRoot;
    const { path: dir, stats } = await statInWorkspace(root, args.path ?? '.');
    if (!stats.isDirectory()) {
      throw new ToolError(
        'INVALID_ARGUMENTS',
        `${args.path ?? '.'}: is a file, not a folder; use read_file to read it.`,
      );
    }
    const lines: string[] = [];
    let capped = false;
    for await (const entry of walkWorkspace({
      root,
      start: dir,
      maxDepth: args.depth ?? 1,
      includeHidden: args.include_hidden ?? false,
      respectGitignore: false,
      signal: ctx.signal,
    })) {
      if (lines.length === MAX_ENTRIES) {
        capped = true;
        break;
      }
      lines.push(formatEntry(entry));
    }
    const where = toWorkspaceRelative(root, dir);
    if (lines.length === 0) return { content: `${where}: (empty folder)` };
    if (capped) {
      lines.push(`[listing capped at ${MAX_ENTRIES} entries; list a subfolder or use a smaller depth]`);
    }
    return { content: lines.join('\n') };
  }
}

function formatEntry(entry: WalkEntry): string {
  switch (entry.kind) {
    case 'directory':
      return `${entry.path}/`;
    case 'file':
      return entry.path;
    case 'link-outside':
      return `${entry.path} (symbolic link leading outside the workspace; not reachable)`;
    case 'special':
      return `${entry.path} (special file or broken link; not readable)`;
  }
}
