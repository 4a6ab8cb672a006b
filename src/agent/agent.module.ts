import { Module } from '@nestjs/common';
import { LlmModule } from '../llm/llm.module';
import { BudgetGuard } from './budget-guard';
import { CallsAhead } from './calls-ahead';
import { RunAccounting } from './run-accounting';
import { StoreModule } from '../store/store.module';
import { ToolsModule } from '../tools/tools.module';
import { ContextWindow } from './context-window';
import { Summarizer } from './summarizer';
import { ModelCallRecorder } from './model-call-recorder';
import { ModelCalls } from './model-calls.service';
import { RecordedRuns } from './recorded-runs';
import { RunOrchestrator } from './run-orchestrator.service';
import { RunTakeover } from './run-takeover';
import { RunTools } from './run-tools.service';
import { ToolStepService } from './tool-step.service';
import { ToolAttachments } from './tool-attachments.service';

/** The loop: call the model, decide and run each step's tool calls, store what happened. */
@Module({
  imports: [LlmModule, ToolsModule, StoreModule],
  providers: [
    RunTools,
    ToolStepService,
    ToolAttachments,
    RunTakeover,
    Summarizer,
    ContextWindow,
    ModelCalls,
    CallsAhead,
    RecordedRuns,
    RunOrchestrator,
    BudgetGuard,
    RunAccounting,
    ModelCallRecorder,
  ],
  exports: [RunOrchestrator, ModelCalls, CallsAhead, BudgetGuard, RunAccounting, ContextWindow, RunTakeover],
})
export class AgentModule {}
