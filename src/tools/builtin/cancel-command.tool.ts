import { Injectable } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config';
import { AgentTool } from '../agent-tool.decorator';
import { BackgroundCommands } from '../exec/background-commands.service';
import { jsonSchemaOf, type Tool, type ToolContext, type ToolResult } from '../tool';
import { Type, type Static } from 'typebox';
import { RunCommandTool } from './run-command.tool';
import { describeCommandStatus, unknownCommand } from './command-status';

const CancelCommandArgs = Type.Object(
  {
    commandId: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'The commandId run_command answered with.',
    }),
  },
  { additionalProperties: false },
);
export type CancelCommandArgs = Static<typeof CancelCommandArgs>;

@Injectable()
@AgentTool()
export class CancelCommandTool implements Tool<CancelCommandArgs> {
  readonly name = 'cancel_command';
  /** It only stops what run_command started; offered with run_command and run without approval. */
  readonly kind = 'exec';
  readonly offeredWith = { name: 'run_command', kind: 'exec' } as const;
  readonly description =
    'Stop a background command (started by run_command with background: true) and every process it started.';
  readonly parameters = jsonSchemaOf(CancelCommandArgs);

  constructor(
    private readonly background: BackgroundCommands,
    private readonly runCommand: RunCommandTool,
  ) {}

  isEnabled(config: AppConfig): boolean {
    return this.runCommand.isEnabled(config);
  }

  async execute(args: CancelCommandArgs, ctx: ToolContext): Promise<ToolResult> {
    const found = await this.background.find(ctx.sessionId, args.commandId);
    if (found === null) return unknownCommand(args.commandId);
    const { record } = found;
    if (record.status !== 'running') {
      return {
        content: `$ ${record.command}\nNothing to stop: ${describeCommandStatus(record).toLowerCase()}.`,
      };
    }
    await this.background.cancel(ctx.sessionId, args.commandId);
    const after = (await this.background.find(ctx.sessionId, args.commandId))?.local;
    const how = after
      ? describeCommandStatus(after)
      : 'Status: stopped by a cancel (its server process ends it within seconds)';
    return { content: `$ ${record.command}\n${how}.` };
  }
}
