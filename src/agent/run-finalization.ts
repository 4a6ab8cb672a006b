import { randomUUID } from 'node:crypto';
import type { RunError } from '../persistence/entities/run.entity';
import type { ToolErrorCode } from '../tools/tool';
import type { PricedUsage, RunEventBody } from '../events/run-events';
import type { ToolCallRow, ToolCallSettlement } from '../store/conversation-store.service';
import type { FinishEntry } from '../store/run-journal.service';
import type { RunRow } from '../store/run-store.service';
import type { SpentCall } from '../store/usage-store.service';
import { runUsage, usageColumns, type RunUsageColumns } from './step-record';
import { errorSettlement, resultEvent } from './tool-results';

/** The model call the run was in when it ended, counted (ModelCallRecorder): the run's usage with it, and its usage row. */
export interface LostCall {
  runUsage: PricedUsage;
  spent: SpentCall;
}

export type FinalOutcome = { status: 'cancelled'; why: string } | { status: 'failed'; error: RunError };

/**
 * Ending a run that did not finish: the partial answer is stored as its last assistant message, every
 * call without a result gets an error result saying why (no orphan tool call is ever left in the
 * history), and the final status is set. Used by the process driving the run and by any process
 * ending a run nobody drives (cancel while waiting, a dead process's run).
 */
export class RunFinalization {
  readonly events: RunEventBody[];
  private readonly partialMessageId: string | null;
  private readonly finalMessageId: string | null;
  private readonly callSettlement: ToolCallSettlement;

  constructor(
    private readonly run: Pick<RunRow, 'id' | 'sessionId' | 'iterations'> & RunUsageColumns,
    private readonly outcome: FinalOutcome,
    private readonly partialText: string,
    private readonly openCalls: readonly ToolCallRow[],
    lastAssistantMessageId: string | null,
    private readonly lostCall?: LostCall,
  ) {
    this.partialMessageId = partialText === '' ? null : randomUUID();
    this.finalMessageId = this.partialMessageId ?? lastAssistantMessageId;
    const [code, why]: [ToolErrorCode, string] =
      outcome.status === 'cancelled'
        ? ['CANCELLED', outcome.why]
        : ['EXECUTION_ERROR', `The run failed before this call finished: ${outcome.error.message}`];
    this.callSettlement = errorSettlement(code, why);
    this.events = openCalls.map((c) => resultEvent(c.callId, c.name, this.callSettlement));
    const usage = lostCall?.runUsage ?? runUsage(run);
    this.events.push(
      outcome.status === 'cancelled'
        ? {
            type: 'done',
            sessionId: run.sessionId,
            status: 'cancelled',
            iterations: run.iterations,
            usage,
            messageId: this.finalMessageId,
          }
        : { type: 'error', ...outcome.error },
    );
  }

  /** What the run's journal stores of this end (RunJournal.finish). */
  get entry(): FinishEntry {
    return {
      sessionId: this.run.sessionId,
      settled: this.openCalls.map((call) => ({ call, settlement: this.callSettlement })),
      partial: this.partialMessageId ? { id: this.partialMessageId, content: this.partialText } : null,
      spent: this.lostCall?.spent ?? null,
      run: {
        status: this.outcome.status,
        error: this.outcome.status === 'failed' ? this.outcome.error : null,
        finalMessageId: this.finalMessageId,
        finished: true,
        ...(this.lostCall ? usageColumns(this.lostCall.runUsage) : {}),
      },
    };
  }
}
