import { Module } from '@nestjs/common';
import { StreamTokens } from '../auth/stream-tokens';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { EventsModule } from '../events/events.module';
import { RunsModule } from '../runs/runs.module';
import { SessionsModule } from '../sessions/sessions.module';
import { ToolsModule } from '../tools/tools.module';
import { ChatController } from './chat.controller';
import { RunStreamsService } from './run-streams.service';
import { RunsController } from './runs.controller';
import { SessionsController } from './sessions.controller';
import { EventStreamService } from './sse/event-stream.service';
import { ToolsController } from './tools.controller';
import { UsageController } from './usage.controller';
import { ModelsController } from './models.controller';

/** The HTTP API: sessions, prompts as event streams, runs, approvals and client results, tools. */
@Module({
  imports: [RunsModule, EventsModule, SessionsModule, ToolsModule],
  controllers: [
    ChatController,
    SessionsController,
    RunsController,
    ToolsController,
    UsageController,
    ModelsController,
  ],
  providers: [
    EventStreamService,
    RunStreamsService,
    {
      provide: StreamTokens,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new StreamTokens(config.apiKeys),
    },
  ],
  exports: [EventStreamService],
})
export class ChatModule {}
