import { Injectable } from '@nestjs/common';
import { DomainError, ErrorCode } from '../common/domain-error';
import { Runs } from '../runs/runs.service';
import { ToolCallDecisions, type Decision } from '../runs/tool-call-decisions.service';
import { RunStore } from '../store/run-store.service';

/** A decision a frontend's message carries for one call. */
export type TurnDecision = Decision & { toolCallId: string };

/**
 * A frontend turn that answers calls instead of asking something (approvals, client tool results):
 * applied to the session's waiting run. The protocols resend the parts a client already had, so only
 * the decisions that answer a call the run still waits for — an approval for a call waiting for
 * approval, a result for a client call — are applied; none is a 409.
 */
@Injectable()
export class WaitingRunTurns {
  constructor(
    private readonly runs: Runs,
    private readonly decisions: ToolCallDecisions,
    private readonly store: RunStore,
  ) {}

  /** Applies the decisions; answers the run and its last event before them, and those applied. */
  async decide(
    owner: string,
    sessionId: string,
    decisions: readonly TurnDecision[],
    noWaitingRun: string,
  ): Promise<{ runId: string; lastSeq: number; decided: TurnDecision[] }> {
    const runId = await this.store.activeRunOfSession(this.store.queryable, sessionId);
    if (!runId) throw new DomainError(ErrorCode.ToolCallNotWaiting, noWaitingRun);
    const run = await this.runs.getRun(owner, runId);
    const waiting = new Map(run.pendingToolCalls.map((c) => [c.callId, c.status]));
    const decided = decisions.filter(
      (d) => waiting.get(d.toolCallId) === (d.kind === 'approval' ? 'pending_approval' : 'awaiting_client'),
    );
    if (decided.length === 0) {
      throw new DomainError(
        ErrorCode.ToolCallNotWaiting,
        'The message answers none of the calls the run waits for',
        {
          runId,
        },
      );
    }
    await this.decisions.decideAll(owner, runId, decided);
    return { runId, lastSeq: run.lastSeq, decided };
  }
}
