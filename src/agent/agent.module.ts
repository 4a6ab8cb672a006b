import { Module } from '@nestjs/common';
import { LlmModule } from '../llm/llm.module';
import { StoreModule } from '../store/store.module';
import { ToolsModule } from '../tools/tools.module';
import { ContextWindow } from './context-window';
import { RunOrchestrator } from './run-orchestrator.service';
import { RunTools } from './run-tools.service';
import { ToolStepService } from './tool-step.service';

/** The loop: call the model, decide and run each step's tool calls, store what happened. */
@Module({
  imports: [LlmModule, ToolsModule, StoreModule],
  providers: [RunTools, ToolStepService, ContextWindow, RunOrchestrator],
  exports: [RunOrchestrator, ContextWindow],
})
export class AgentModule {}
