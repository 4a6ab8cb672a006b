import { Injectable } from '@nestjs/common';
import { AgentTool } from '../agent-tool.decorator';
import { commitChanges, describePlanned, type PlannedChange } from '../fs/file-change-plan';
import { detectLineEnding, toCrlf, toLf } from '../fs/line-endings';
import { findNearestMatch } from '../fs/nearest-match';
import { readTextFile } from '../fs/text-file';
import { capHead } from '../output-cap';
import { toWorkspaceRelative } from '../fs/workspace-paths';
import { openInWorkspace } from '../path-guard';
import { ToolError, jsonSchemaOf, type Tool, type ToolContext, type ToolResult } from '../tool';
import { Type, type Static } from 'typebox';

const EditFileArgs = Type.Object(
  {
    path: Type.String({ description: 'File to edit, relative to the workspace root.' }),
    old_text: Type.String({ minLength: 1, description: 'The exact text to replace.' }),
    new_text: Type.String({ description: 'The text to put in its place (may be empty to delete).' }),
    replace_all: Type.Optional(
      Type.Boolean({
        description: 'Replace every occurrence instead of requiring exactly one (default false).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type EditFileArgs = Static<typeof EditFileArgs>;

interface PlannedEdit {
  change: PlannedChange;
  /** 1-based line of each replaced occurrence, in the file before the edit. */
  lines: number[];
}

const HINT_MAX_BYTES = 2048;

@Injectable()
@AgentTool()
export class EditFileTool implements Tool<EditFileArgs> {
  readonly name = 'edit_file';
  readonly kind = 'write';
  readonly description =
    'Replace an exact piece of text in a file. old_text must appear exactly once (copy it from read_file, whitespace included, with enough surrounding lines to be unique) unless replace_all is true. If it is missing or ambiguous nothing changes and the answer shows the closest text or where it occurs. Line endings are kept.';
  readonly parameters = jsonSchemaOf(EditFileArgs);

  async describeForApproval(args: EditFileArgs, ctx: Pick<ToolContext, 'workspaceRoot'>): Promise<string> {
    return describePlanned(`edit_file ${args.path}`, async () => [
      (await this.plan(args, ctx.workspaceRoot)).change,
    ]);
  }

  async execute(args: EditFileArgs, ctx: ToolContext): Promise<ToolResult> {
    const { change, lines } = await this.plan(args, ctx.workspaceRoot);
    const changes = await commitChanges(ctx.workspaceRoot, [change]);
    const count = lines.length === 1 ? '1 occurrence' : `${lines.length} occurrences`;
    return { content: `Replaced ${count} in ${change.path} (line ${lines.join(', ')}).`, changes };
  }

  private async plan(args: EditFileArgs, root: string): Promise<PlannedEdit> {
    const opened = await openInWorkspace(root, args.path);
    const absPath = opened.path;
    const path = toWorkspaceRelative(root, absPath);
    const file = await readTextFile(opened, path);
    if (args.old_text === args.new_text) {
      throw new ToolError('INVALID_ARGUMENTS', 'old_text and new_text are identical; nothing to change.');
    }

    // Models write LF; a CRLF file is edited in LF and converted back so its endings survive.
    // A mixed file is matched as written, because converting it would touch every line.
    const ending = detectLineEnding(file.text);
    const mixed = ending === 'mixed';
    const text = ending === 'crlf' ? toLf(file.text) : file.text;
    const oldText = mixed ? args.old_text : toLf(args.old_text);
    const newText = mixed ? args.new_text : toLf(args.new_text);

    const positions = occurrences(text, oldText);
    if (positions.length === 0) throw notFound(path, text, oldText);
    if (positions.length > 1 && !args.replace_all) {
      const at = positions.map((position) => lineAt(text, position)).join(', ');
      throw new ToolError(
        'CONFLICT',
        `old_text occurs ${positions.length} times in ${path} (lines ${at}). Include more surrounding lines so it matches exactly once, or set replace_all to true.`,
      );
    }
    const edited = replaceAt(text, positions, oldText.length, newText);
    const after = ending === 'crlf' ? toCrlf(edited) : edited;
    return {
      change: { path, absPath, before: file.bytes, after: Buffer.from(after, 'utf8'), mode: file.mode },
      lines: positions.map((position) => lineAt(text, position)),
    };
  }
}

function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
    found.push(at);
  }
  return found;
}

/** Splices by position: String.replace would interpret "$&" and friends in the model's text. */
function replaceAt(text: string, positions: readonly number[], length: number, replacement: string): string {
  let result = '';
  let from = 0;
  for (const position of positions) {
    result += text.slice(from, position) + replacement;
    from = position + length;
  }
  return result + text.slice(from);
}

function lineAt(text: string, position: number): number {
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < position; at = text.indexOf('\n', at + 1)) line++;
  return line;
}

function notFound(path: string, text: string, oldText: string): ToolError {
  const nearest = findNearestMatch(toLf(text), toLf(oldText));
  if (nearest === null) {
    return new ToolError('NOT_FOUND', `old_text was not found in ${path} (the file is empty).`);
  }
  const similarity = Math.round(nearest.similarity * 100);
  const parts = [
    `old_text was not found in ${path}. The closest text is at lines ${nearest.startLine}-${nearest.endLine} (${similarity}% similar):`,
    capHead(nearest.text, HINT_MAX_BYTES).text,
  ];
  const diff = nearest.firstDifference;
  if (diff !== null) {
    parts.push(
      `First difference, line ${diff.line}: old_text has ${JSON.stringify(diff.expected)} but the file has ${JSON.stringify(diff.found)}.`,
    );
  }
  parts.push('Copy old_text exactly as the file has it (read_file shows it as stored), then try again.');
  return new ToolError('NOT_FOUND', parts.join('\n'));
}
