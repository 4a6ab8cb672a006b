import { Module } from '@nestjs/common';
import { LlmModule } from '../llm/llm.module';
import { ToolsModule } from '../tools/tools.module';
import { ConversationStore } from './conversation-store.service';
import { RunEventHub } from './run-event-hub.service';
import { RunOrchestrator } from './run-orchestrator.service';
import { RunStore } from './run-store.service';
import { RunSupervisor } from './run-supervisor.service';
import { RunService } from './run.service';
import { SessionStore } from './session-store.service';
import { SessionsService } from './sessions.service';
import { ToolCallDecisions } from './tool-call-decisions.service';
import { ToolStepService } from './tool-step.service';

/** Runs and the loop: sessions, the orchestrator, the event log and the clocks of durable runs. */
@Module({
  imports: [LlmModule, ToolsModule],
  providers: [
    RunStore,
    ConversationStore,
    SessionStore,
    SessionsService,
    RunEventHub,
    ToolStepService,
    RunOrchestrator,
    RunService,
    ToolCallDecisions,
    RunSupervisor,
  ],
  exports: [SessionsService, RunService, ToolCallDecisions, RunEventHub, ToolsModule],
})
export class AgentModule {}
