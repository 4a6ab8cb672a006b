import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/sessions.module';
import { StoreModule } from '../store/store.module';
import { ToolsModule } from '../tools/tools.module';
import { CommandsController } from './commands.controller';
import { SessionCommands } from './session-commands.service';

/** Background commands' durable list: GET /v1/sessions/:id/commands, and the store under BackgroundCommands. */
@Module({
  imports: [SessionsModule, StoreModule, ToolsModule],
  controllers: [CommandsController],
  providers: [SessionCommands],
})
export class CommandsModule {}
