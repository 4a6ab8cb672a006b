import { Injectable } from '@nestjs/common';
import type { Stats } from 'node:fs';
import picomatch from 'picomatch';
import { AgentTool } from '../agent-tool.decorator';
import { walkWorkspace } from '../fs/workspace-walker';
import { statInWorkspace } from '../path-guard';
import { ToolError, jsonSchemaOf, type Tool, type ToolContext, type ToolResult } from '../tool';
import { Type, type Static } from 'typebox';

const GlobArgs = Type.Object(
  {
    pattern: Type.String({
      minLength: 1,
      description: 'Glob pattern relative to the workspace root (* within a name, ** across folders).',
    }),
  },
  { additionalProperties: false },
);
export type GlobArgs = Static<typeof GlobArgs>;

const MAX_RESULTS = 1000;

@Injectable()
@AgentTool()
export class GlobTool implements Tool<GlobArgs> {
  readonly name = 'glob';
  readonly kind = 'read';
  readonly description =
    'Find files and folders whose path matches a glob pattern, e.g. "**/*.ts" or "src/**/index.{js,ts}". Paths are relative to the workspace root; folders end with "/". Files listed in .gitignore are left out, and hidden names only match when the pattern names them (e.g. ".github/**").';
  readonly parameters = jsonSchemaOf(GlobArgs);

  async execute(args: GlobArgs, ctx: ToolContext): Promise<ToolResult> {
    const root = ctx.workspaceRoot;
    const pattern = args.pattern.replace(/^\.\//, '');
    if (pattern.startsWith('/') || pattern.split('/').includes('..')) {
      throw new ToolError(
        'INVALID_ARGUMENTS',
        'pattern: must be relative to the workspace root, without "/" at the start or "..".',
      );
    }
    const scan = picomatch.scan(pattern);
    if (!scan.isGlob) return this.literalPath(root, pattern, args.pattern);
    // Only what lies below the pattern's literal prefix ("src/app" for "src/app/**") can match.
    const base = await existingPath(root, scan.base);
    if (base === null || !base.stats.isDirectory()) {
      return { content: `No paths match ${JSON.stringify(args.pattern)}.` };
    }
    const isMatch = picomatch(pattern, { dot: false });
    // Hidden folders (.venv, .cache…) can be huge: enter them only when the pattern names a hidden segment.
    const includeHidden = /(^|\/)\./.test(pattern);

    const found: string[] = [];
    let capped = false;
    const walk = walkWorkspace({
      root,
      start: base.path,
      maxDepth: Number.POSITIVE_INFINITY,
      includeHidden,
      respectGitignore: true,
      signal: ctx.signal,
    });
    for await (const entry of walk) {
      if (entry.kind !== 'file' && entry.kind !== 'directory') continue;
      if (entry.path === '.git' || entry.path.endsWith('/.git') || !isMatch(entry.path)) continue;
      if (found.length === MAX_RESULTS) {
        capped = true;
        break;
      }
      found.push(entry.kind === 'directory' ? `${entry.path}/` : entry.path);
    }
    if (found.length === 0) return { content: `No paths match ${JSON.stringify(args.pattern)}.` };
    if (capped) found.push(`[results capped at ${MAX_RESULTS} paths; use a narrower pattern]`);
    return { content: found.join('\n'), truncated: capped };
  }

  private async literalPath(root: string, pattern: string, asked: string): Promise<ToolResult> {
    const found = await existingPath(root, pattern);
    if (found === null) return { content: `No paths match ${JSON.stringify(asked)}.` };
    const isDirectory = found.stats.isDirectory();
    return { content: isDirectory ? `${pattern.replace(/\/$/, '')}/` : pattern };
  }
}

async function existingPath(root: string, relPath: string): Promise<{ path: string; stats: Stats } | null> {
  try {
    return await statInWorkspace(root, relPath === '' ? '.' : relPath);
  } catch (err) {
    if (err instanceof ToolError && err.code === 'NOT_FOUND') return null;
    throw err;
  }
}
