import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module';
import { StreamTokens } from '../auth/stream-tokens';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { EventsModule } from '../events/events.module';
import { FilesModule } from '../files/files.module';
import { LlmModule } from '../llm/llm.module';
import { SessionsModule } from '../sessions/sessions.module';
import { SseModule } from '../sse/sse.module';
import { StoreModule } from '../store/store.module';
import { ToolsModule } from '../tools/tools.module';
import { ChatController } from './chat.controller';
import { DrivenRuns } from './driven-runs.service';
import { ResumedRuns } from './resumed-runs.service';
import { RunLeases } from './run-leases.service';
import { Runs } from './runs.service';
import { RunsController } from './runs.controller';
import { QueuedRuns } from './queued-runs.service';
import { RunStreams } from './run-streams.service';
import { RunStarts } from './run-starts.service';
import { StartLimits } from './start-limits.service';
import { StartPlans } from './start-plans.service';
import { StartReplays } from './start-replays.service';
import { RunSupervisor } from './run-supervisor.service';
import { LostRuns } from './lost-runs.service';
import { SessionCompactionsController } from './session-compactions.controller';
import { SessionCompactions } from './session-compactions.service';
import { ToolCallDecisions } from './tool-call-decisions.service';
import { Delegations } from './delegations.service';

/** The durable life of runs: start, take up, settle waiting calls, cancel, supervise, end; `/v1/chat` and `/v1/runs`. */
@Module({
  imports: [
    AgentModule,
    EventsModule,
    FilesModule,
    LlmModule,
    SessionsModule,
    StoreModule,
    ToolsModule,
    SseModule,
  ],
  controllers: [ChatController, RunsController, SessionCompactionsController],
  providers: [
    Runs,
    DrivenRuns,
    ResumedRuns,
    RunLeases,
    RunStarts,
    StartPlans,
    StartLimits,
    StartReplays,
    ToolCallDecisions,
    Delegations,
    LostRuns,
    RunSupervisor,
    SessionCompactions,
    RunStreams,
    QueuedRuns,
    {
      provide: StreamTokens,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new StreamTokens(config.apiKeys),
    },
  ],
  exports: [Runs, ToolCallDecisions],
})
export class RunsModule {}
