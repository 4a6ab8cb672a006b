import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Owner } from '../auth/owner.decorator';
import { ApiErrors } from '../http/api-errors.decorator';
import { SessionIdPipe } from '../http/uuid-or-404.pipe';
import { BackgroundCommandResponse } from './dto/background-command.response';
import { SessionCommands } from './session-commands.service';

@ApiTags('sessions')
@Controller('v1/sessions')
export class CommandsController {
  constructor(private readonly commands: SessionCommands) {}

  @Get(':id/commands')
  @ApiOperation({
    summary: "A session's background commands (run_command with background: true), oldest first",
  })
  @ApiOkResponse({ type: [BackgroundCommandResponse] })
  @ApiErrors(404)
  async list(
    @Owner() owner: string,
    @Param('id', SessionIdPipe) id: string,
  ): Promise<BackgroundCommandResponse[]> {
    return (await this.commands.list(owner, id)).map((c) => ({
      commandId: c.commandId,
      command: c.command,
      status: c.status,
      exitCode: c.exitCode,
      startedAt: c.startedAt.toISOString(),
      endedAt: c.endedAt?.toISOString() ?? null,
    }));
  }
}
