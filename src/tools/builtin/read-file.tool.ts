import { Injectable } from '@nestjs/common';
import type { FileHandle } from 'node:fs/promises';
import { AgentTool } from '../agent-tool.decorator';
import { readLineRange, type LineRange } from '../fs/line-range-reader';
import { looksBinary } from '../fs/text-file';
import { visualFileResult } from '../fs/visual-file';
import { closeInBackground } from '../fs/held-dir';
import { toWorkspaceRelative } from '../fs/workspace-paths';
import { openInWorkspace } from '../path-guard';
import { ToolError, jsonSchemaOf, type Tool, type ToolContext, type ToolResult } from '../tool';
import { Type, type Static } from 'typebox';

const ReadFileArgs = Type.Object(
  {
    path: Type.String({ description: 'File to read, relative to the workspace root.' }),
    start_line: Type.Optional(
      Type.Integer({ minimum: 1, description: 'First line to return (1-based). Default: 1.' }),
    ),
    end_line: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'Last line to return (inclusive). Default: the end of the file.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ReadFileArgs = Static<typeof ReadFileArgs>;

@Injectable()
@AgentTool()
export class ReadFileTool implements Tool<ReadFileArgs> {
  readonly name = 'read_file';
  readonly kind = 'read';
  readonly description =
    "Read a text file from the workspace, exactly as stored. Large files are cut at a size limit: the answer then ends with a note giving the file's size and line count, and you can read further with start_line/end_line.";
  readonly parameters = jsonSchemaOf(ReadFileArgs);

  async execute(args: ReadFileArgs, ctx: ToolContext): Promise<ToolResult> {
    const startLine = args.start_line ?? 1;
    const endLine = args.end_line ?? Number.POSITIVE_INFINITY;
    if (endLine < startLine) {
      throw new ToolError('INVALID_ARGUMENTS', `end_line (${endLine}) is before start_line (${startLine}).`);
    }
    // One open for everything below: the file that was checked is the file that is read.
    const { path, handle, stats } = await openInWorkspace(ctx.workspaceRoot, args.path);
    const shown = toWorkspaceRelative(ctx.workspaceRoot, path);
    let range: LineRange;
    try {
      if (stats.isDirectory()) {
        throw new ToolError(
          'INVALID_ARGUMENTS',
          `${shown}: is a folder; use list_directory to see what it holds.`,
        );
      }
      const head = await readHead(handle);
      // An image or a PDF goes to the model as itself ("Attachments").
      const visual = await visualFileResult(handle, stats.size, head, shown, ctx);
      if (visual !== null) return visual;
      if (looksBinary(head)) {
        return { content: `${shown}: binary file (${stats.size} bytes); its content is not shown.` };
      }
      // A file no longer than its head has been read whole already.
      range = await readLineRange(head.length < HEAD_BYTES ? head : handle, {
        startLine,
        endLine,
        maxBytes: ctx.config.readMaxBytes,
        signal: ctx.signal,
      });
    } finally {
      closeInBackground(handle);
    }
    if (range.totalBytes === 0) return { content: `${shown}: (empty file)` };
    if (startLine > range.totalLines) {
      throw new ToolError(
        'INVALID_ARGUMENTS',
        `start_line ${startLine} is past the end: ${shown} has ${range.totalLines} lines.`,
      );
    }
    const ranged = args.start_line !== undefined || args.end_line !== undefined;
    if (!range.cut && !ranged) return { content: range.text };
    return { content: withTrailingNewline(range.text) + footer(range, startLine), truncated: range.cut };
  }
}

/** How much of a file tells whether it is binary. */
const HEAD_BYTES = 8000;

/** The first HEAD_BYTES of the file (all of it when shorter). */
async function readHead(handle: FileHandle): Promise<Buffer> {
  const { buffer, bytesRead } = await handle.read(Buffer.alloc(HEAD_BYTES), 0, HEAD_BYTES, 0);
  return buffer.subarray(0, bytesRead);
}

function withTrailingNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

function footer(range: LineRange, startLine: number): string {
  const lines = `lines ${startLine}-${range.lastLine} of ${range.totalLines}`;
  if (!range.cut) return `[${lines}]`;
  const bytes = `${Buffer.byteLength(range.text)} of ${range.totalBytes} bytes`;
  const more = range.lastLine < range.totalLines;
  const next = range.cutMidLine
    ? `line ${range.lastLine} is longer than the read limit and was cut` +
      (more ? `; read from start_line=${range.lastLine + 1} for what follows it` : '')
    : `read on with start_line=${range.lastLine + 1}`;
  return `[truncated: showing ${lines} (${bytes}); ${next}]`;
}
