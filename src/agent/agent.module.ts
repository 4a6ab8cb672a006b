import { Module } from '@nestjs/common';
import { LlmModule } from '../llm/llm.module';
import { BudgetGuard } from './budget-guard.service';
import { CallsAhead } from './calls-ahead.service';
import { RunAccounting } from './run-accounting.service';
import { StoreModule } from '../store/store.module';
import { ToolsModule } from '../tools/tools.module';
import { ContextWindow } from './context-window.service';
import { Summarizer } from './summarizer.service';
import { ModelCallRecorder } from './model-call-recorder.service';
import { ModelCalls } from './model-calls.service';
import { RecordedRuns } from './recorded-runs.service';
import { NextCalls } from './next-calls.service';
import { ReservationPrices } from './reservation-prices.service';
import { RunOrchestrator } from './run-orchestrator.service';
import { RunTakeover } from './run-takeover.service';
import { RunTools } from './run-tools.service';
import { ToolSteps } from './tool-steps.service';
import { ToolAttachments } from './tool-attachments.service';

/** The loop: call the model, decide and run each step's tool calls, store what happened. */
@Module({
  imports: [LlmModule, ToolsModule, StoreModule],
  providers: [
    RunTools,
    ToolSteps,
    ToolAttachments,
    RunTakeover,
    Summarizer,
    ContextWindow,
    ModelCalls,
    CallsAhead,
    RecordedRuns,
    NextCalls,
    ReservationPrices,
    RunOrchestrator,
    BudgetGuard,
    RunAccounting,
    ModelCallRecorder,
  ],
  exports: [RunOrchestrator, ModelCalls, CallsAhead, BudgetGuard, RunAccounting, ContextWindow, RunTakeover],
})
export class AgentModule {}
