import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module';
import { ChatController } from './chat.controller';
import { RunStreamsService } from './run-streams.service';
import { RunsController } from './runs.controller';
import { SessionsController } from './sessions.controller';
import { EventStreamService } from './sse/event-stream.service';
import { ToolsController } from './tools.controller';

/** The HTTP API: sessions, prompts as event streams, runs, approvals and client results, tools. */
@Module({
  imports: [AgentModule],
  controllers: [ChatController, SessionsController, RunsController, ToolsController],
  providers: [EventStreamService, RunStreamsService],
})
export class ChatModule {}
