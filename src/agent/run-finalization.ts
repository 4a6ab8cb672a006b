import { randomUUID } from 'node:crypto';
import type { RunError } from '../persistence/entities/run.entity';
import type { ToolErrorCode } from '../tools/tool';
import type { MetricsService } from '../metrics/metrics.service';
import { serializeEvents, type RunEventBody } from './run-events';
import type { ConversationStore, ToolCallRow, ToolCallSettlement } from './conversation-store.service';
import type { Queryable, RunRow, RunStore } from './run-store.service';
import { errorSettlement, resultEvent } from './tool-step.service';

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
    private readonly run: Pick<
      RunRow,
      'id' | 'sessionId' | 'iterations' | 'promptTokens' | 'completionTokens'
    >,
    private readonly outcome: FinalOutcome,
    private readonly partialText: string,
    private readonly openCalls: readonly ToolCallRow[],
    lastAssistantMessageId: string | null,
  ) {
    this.partialMessageId = partialText === '' ? null : randomUUID();
    this.finalMessageId = this.partialMessageId ?? lastAssistantMessageId;
    const [code, why]: [ToolErrorCode, string] =
      outcome.status === 'cancelled'
        ? ['CANCELLED', outcome.why]
        : ['EXECUTION_ERROR', `The run failed before this call finished: ${outcome.error.message}`];
    this.callSettlement = errorSettlement(code, why);
    this.events = openCalls.map((c) => resultEvent(c.callId, c.name, this.callSettlement));
    const usage = { promptTokens: run.promptTokens, completionTokens: run.completionTokens };
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

  async apply(runs: RunStore, conversation: ConversationStore, tx: Queryable): Promise<void> {
    for (const call of this.openCalls) await conversation.settleToolCall(tx, call, this.callSettlement);
    if (this.partialMessageId) {
      const seq = await conversation.reserveMessageSeqs(tx, this.run.sessionId, 1);
      await conversation.insertMessages(tx, this.run.sessionId, this.run.id, [
        { id: this.partialMessageId, seq, role: 'assistant', content: this.partialText },
      ]);
    }
    await runs.updateRun(tx, this.run.id, {
      status: this.outcome.status,
      error: this.outcome.status === 'failed' ? this.outcome.error : null,
      finalMessageId: this.finalMessageId,
      finished: true,
    });
  }
}

/**
 * Ends a run no process is driving — one waiting for people, or one whose process died — under the
 * run's row lock. Returns false when a live process drives it after all (it must be asked instead).
 */
export async function finishDetachedRun(
  runs: RunStore,
  conversation: ConversationStore,
  metrics: MetricsService,
  runId: string,
  outcome: FinalOutcome,
): Promise<boolean> {
  const result = await runs.transaction(async (tx) => {
    const run = await runs.lockRun(tx, runId);
    if (!run || (run.status !== 'running' && run.status !== 'requires_action')) return 'ended' as const;
    if (run.status === 'running' && !run.leaseExpired) return 'driven' as const;
    const partialText = run.status === 'running' ? await runs.unfinishedText(tx, runId) : '';
    const open = await conversation.unsettledToolCalls(tx, runId);
    const last = await conversation.lastAssistantMessageId(tx, runId);
    const finalization = new RunFinalization(run, outcome, partialText, open, last);
    await finalization.apply(runs, conversation, tx);
    await runs.appendEvents(tx, runId, serializeEvents(runId, run.lastSeq, finalization.events));
    return outcome.status;
  });
  if (result === 'cancelled' || result === 'failed') metrics.runFinished(result, 0);
  return result !== 'driven';
}
