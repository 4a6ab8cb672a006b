import { Injectable } from '@nestjs/common';
import { RE2JS } from 're2js';
import type { AppConfig } from '../../config/app-config';
import { AgentTool } from '../agent-tool.decorator';
import { BackgroundCommands } from '../exec/background-commands.service';
import type { CommandRecord } from '../exec/command-records';
import { viewOutput, type OutputQuery } from '../exec/command-output';
import { ToolError, jsonSchemaOf, type Tool, type ToolContext, type ToolResult } from '../tool';
import { Type, type Static } from 'typebox';
import { RunCommandTool } from './run-command.tool';
import { describeCommandStatus, unknownCommand } from './command-status';

const GetCommandOutputArgs = Type.Object(
  {
    commandId: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'The commandId run_command answered with.',
    }),
    tail: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100_000, description: 'Only the newest this many lines.' }),
    ),
    grep: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description:
          'Only the lines matching this regular expression (RE2 syntax: no backreferences or lookarounds).',
      }),
    ),
    since: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Only what came after this byte offset: the "next" offset of an earlier answer.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type GetCommandOutputArgs = Static<typeof GetCommandOutputArgs>;

/** Room kept under READ_MAX_BYTES for the status lines. */
const HEADER_ROOM_BYTES = 512;

@Injectable()
@AgentTool()
export class GetCommandOutputTool implements Tool<GetCommandOutputArgs> {
  readonly name = 'get_command_output';
  readonly kind = 'read';
  readonly offeredWith = { name: 'run_command', kind: 'exec' } as const;
  readonly description =
    "A background command's status (running, its exit code, or what stopped it) and its output, stdout and stderr together as they came: the newest part, or the newest `tail` lines, the lines matching `grep`, or what came after byte offset `since` (each answer names the offset to ask from next). Long output keeps its start and its newest part.";
  readonly parameters = jsonSchemaOf(GetCommandOutputArgs);

  constructor(
    private readonly background: BackgroundCommands,
    private readonly runCommand: RunCommandTool,
  ) {}

  isEnabled(config: AppConfig): boolean {
    return this.runCommand.isEnabled(config);
  }

  async execute(args: GetCommandOutputArgs, ctx: ToolContext): Promise<ToolResult> {
    const query: OutputQuery = {
      since: args.since,
      tail: args.tail,
      grep: args.grep === undefined ? undefined : linePattern(args.grep),
    };
    const found = await this.background.find(ctx.sessionId, args.commandId);
    if (found === null) return unknownCommand(args.commandId);
    const { local, record } = found;
    if (local === null) return this.elsewhere(record);
    const status = describeCommandStatus(local);
    const view = viewOutput(
      local.output(),
      query,
      Math.max(1024, ctx.config.readMaxBytes - HEADER_ROOM_BYTES),
    );
    const body = view.text === '' ? '(no output)' : view.text;
    const cut = view.cut ? ' (more than fits in one answer: ask with since, tail or grep for the rest)' : '';
    return {
      content: `$ ${local.command}\n${status}. Output up to byte ${view.next}${cut}; to read only what comes next: since=${view.next}.\n${body}`,
      truncated: view.cut,
    };
  }

  /** Its output lives only in the process that ran it: gone with it, or readable only there. */
  private elsewhere(record: CommandRecord): ToolResult {
    const content =
      record.status === 'running'
        ? `$ ${record.command}\nCommand ${record.commandId} is running in another server process of this service; its output can only be read there (ask again later from a run of this session, or cancel it with cancel_command).`
        : `$ ${record.command}\nCommand ${record.commandId} ${describeCommandStatus(record)}; its output is no longer kept${record.stopReason === 'process' ? ' (its server process stopped)' : ''}.`;
    return { content, isError: true, errorCode: 'NOT_FOUND' };
  }
}

/** grep: RE2's linear-time engine (docs/decisions/008-linear-time-patterns.md), one line at a time. */
function linePattern(source: string): (line: string) => boolean {
  try {
    const re = RE2JS.compile(source);
    return (line) => re.matcher(line).find();
  } catch (err) {
    throw new ToolError('INVALID_ARGUMENTS', `grep: not a pattern RE2 can run (${(err as Error).message}).`);
  }
}
