import { Injectable } from '@nestjs/common';
import picomatch from 'picomatch';
import { AgentTool } from '../agent-tool.decorator';
import { walkWorkspace } from '../fs/workspace-walker';
import { toWorkspaceRelative } from '../fs/workspace-paths';
import { statInWorkspace } from '../path-guard';
import { searchInWorker, type SearchOutcome } from '../search/search-worker';
import { ToolError, jsonSchemaOf, type Tool, type ToolContext, type ToolResult } from '../tool';
import { Type, type Static } from 'typebox';

const DEFAULT_MAX_RESULTS = 200;

const SearchFilesArgs = Type.Object(
  {
    query: Type.String({
      minLength: 1,
      description: 'Text to look for; a JavaScript regular expression when regex is true.',
    }),
    regex: Type.Optional(
      Type.Boolean({ description: 'Treat query as a regular expression (default false: literal text).' }),
    ),
    case_sensitive: Type.Optional(Type.Boolean({ description: 'Match letter case exactly (default true).' })),
    path: Type.Optional(
      Type.String({
        description:
          'Folder (or single file) to search, relative to the workspace root. Default: the whole workspace.',
      }),
    ),
    glob: Type.Optional(
      Type.String({
        description:
          'Only search files matching this glob, e.g. "*.ts" (matched against the file name) or "src/**/*.test.ts" (matched against the path).',
      }),
    ),
    max_results: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1000,
        description: `Most matching lines to return (default ${DEFAULT_MAX_RESULTS}).`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type SearchFilesArgs = Static<typeof SearchFilesArgs>;
const MAX_FILES = 50_000;
const MAX_FILE_BYTES = 2 * 1024 * 1024;
const MAX_LINE_CHARS = 300;

@Injectable()
@AgentTool()
export class SearchFilesTool implements Tool<SearchFilesArgs> {
  readonly name = 'search_files';
  readonly kind = 'read';
  readonly description =
    'Search the text of the workspace files for a string or a regular expression, line by line. Answers one "path:line: text" per matching line. Skips files listed in .gitignore, hidden files and folders, binary files and files over 2 MB.';
  readonly parameters = jsonSchemaOf(SearchFilesArgs);

  async execute(args: SearchFilesArgs, ctx: ToolContext): Promise<ToolResult> {
    const root = ctx.workspaceRoot;
    const { path: start, stats } = await statInWorkspace(root, args.path ?? '.');
    const pattern = compilePattern(args);
    const matchesGlob = args.glob === undefined ? () => true : globFilter(args.glob);
    const { files, tooMany } = stats.isFile()
      ? {
          files: [{ path: toWorkspaceRelative(root, start), real: toWorkspaceRelative(root, start) }],
          tooMany: false,
        }
      : await this.collectFiles(root, start, matchesGlob, ctx.signal);
    const maxMatches = args.max_results ?? DEFAULT_MAX_RESULTS;
    const outcome = await searchInWorker(
      {
        root,
        files,
        source: pattern.source,
        flags: pattern.flags,
        maxMatches,
        maxFileBytes: MAX_FILE_BYTES,
        maxLineChars: MAX_LINE_CHARS,
      },
      ctx.signal,
    );
    return {
      content: formatOutcome(args.query, outcome, maxMatches, tooMany),
      truncated: outcome.capped || tooMany,
    };
  }

  private async collectFiles(
    root: string,
    start: string,
    matchesGlob: (path: string) => boolean,
    signal: AbortSignal,
  ): Promise<{ files: { path: string; real: string }[]; tooMany: boolean }> {
    const files: { path: string; real: string }[] = [];
    const walk = walkWorkspace({
      root,
      start,
      maxDepth: Number.POSITIVE_INFINITY,
      includeHidden: false,
      respectGitignore: true,
      signal,
    });
    for await (const entry of walk) {
      if (entry.kind !== 'file' || !matchesGlob(entry.path)) continue;
      if (files.length === MAX_FILES) return { files, tooMany: true };
      files.push({ path: entry.path, real: entry.real });
    }
    return { files, tooMany: false };
  }
}

/** "*.ts" matches file names anywhere (as grep users expect); a glob with a "/" matches the path from the root. */
function globFilter(glob: string): (path: string) => boolean {
  // picomatch's basename option would also apply to globs with a slash, so choose here.
  return picomatch(glob, { basename: !glob.includes('/'), dot: true });
}

function compilePattern(args: SearchFilesArgs): RegExp {
  const flags = args.case_sensitive === false ? 'i' : '';
  if (!args.regex) return new RegExp(args.query.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), flags);
  try {
    return new RegExp(args.query, `${flags}u`);
  } catch {
    try {
      // Outside unicode mode JavaScript accepts more escapes (e.g. "\-"), as grep users expect.
      return new RegExp(args.query, flags);
    } catch (err) {
      throw new ToolError(
        'INVALID_ARGUMENTS',
        `query: not a valid regular expression (${(err as Error).message}).`,
      );
    }
  }
}

function formatOutcome(query: string, outcome: SearchOutcome, maxMatches: number, tooMany: boolean): string {
  const lines = outcome.matches.map((match) => `${match.path}:${match.line}: ${match.text}`);
  const notes: string[] = [];
  if (lines.length === 0) {
    notes.push(`No matches for ${JSON.stringify(query)} in ${outcome.filesSearched} files.`);
  }
  if (outcome.capped) {
    notes.push(`[results capped at ${maxMatches} matches; narrow the query, path or glob to see the rest]`);
  }
  if (tooMany) notes.push(`[only the first ${MAX_FILES} files were searched; narrow the path or glob]`);
  if (outcome.skippedLarge > 0) {
    notes.push(`[${outcome.skippedLarge} files over ${MAX_FILE_BYTES} bytes were skipped]`);
  }
  return [...lines, ...notes].join('\n');
}
