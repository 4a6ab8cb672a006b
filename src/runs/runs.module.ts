import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module';
import { EventsModule } from '../events/events.module';
import { SessionsModule } from '../sessions/sessions.module';
import { StoreModule } from '../store/store.module';
import { ToolsModule } from '../tools/tools.module';
import { FirstCallsAhead } from './first-calls-ahead';
import { DrivenRuns } from './driven-runs.service';
import { ResumedRuns } from './resumed-runs.service';
import { RunLeases } from './run-leases.service';
import { RunService } from './run.service';
import { RunStarts } from './run-starts.service';
import { StartLimits } from './start-limits.service';
import { StartPlans } from './start-plans.service';
import { StartReplays } from './start-replays.service';
import { RunSupervisor } from './run-supervisor.service';
import { LostRuns } from './lost-runs.service';
import { SessionCompactions } from './session-compactions.service';
import { ToolCallDecisions } from './tool-call-decisions.service';
import { UsageReports } from './usage-reports.service';

/** The durable life of runs: start, take up, settle waiting calls, cancel, supervise, end. */
@Module({
  imports: [AgentModule, EventsModule, SessionsModule, StoreModule, ToolsModule],
  providers: [
    RunService,
    DrivenRuns,
    ResumedRuns,
    RunLeases,
    RunStarts,
    StartPlans,
    StartLimits,
    StartReplays,
    FirstCallsAhead,
    ToolCallDecisions,
    LostRuns,
    RunSupervisor,
    UsageReports,
    SessionCompactions,
  ],
  exports: [RunService, ToolCallDecisions, UsageReports, SessionCompactions],
})
export class RunsModule {}
