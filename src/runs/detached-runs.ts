import type { Metrics } from '../metrics/metrics.service';
import { RunFinalization, type FinalOutcome } from '../agent/run-finalization';
import type { RunTakeover } from '../agent/run-takeover.service';
import { serializeEvents } from '../events/run-events';
import type { ConversationStore } from '../store/conversation-store.service';
import type { RunJournal } from '../store/run-journal.service';
import type { RunStore } from '../store/run-store.service';

/**
 * Ends a run no process is driving — one waiting for people, or one whose process died — under the
 * run's row lock. Returns false when a live process drives it after all (it must be asked instead).
 */
export async function finishDetachedRun(
  runs: RunStore,
  conversation: ConversationStore,
  journal: RunJournal,
  metrics: Metrics,
  runId: string,
  outcome: FinalOutcome,
  takeover: Pick<RunTakeover, 'interruptedCall'>,
): Promise<boolean> {
  const result = await runs.transaction(async (tx) => {
    const run = await runs.lockRun(tx, runId);
    if (!run || (run.status !== 'running' && run.status !== 'requires_action')) return 'ended' as const;
    if (run.status === 'running' && !run.leaseExpired) return 'driven' as const;
    const partialText = run.status === 'running' ? await runs.unfinishedText(tx, runId) : '';
    const open = await conversation.unsettledToolCalls(tx, runId);
    const last = await conversation.lastAssistantMessageId(tx, runId);
    // A run whose process died in a model call (none of its calls open): that call counts.
    const lost =
      run.status === 'running' && open.length === 0
        ? await takeover.interruptedCall(
            run,
            await conversation.runConversation(run.sessionId, tx),
            [],
            partialText,
          )
        : undefined;
    const finalization = new RunFinalization(run, outcome, partialText, open, last, lost);
    await journal.finishIn(tx, runId, finalization.entry);
    await runs.appendEvents(tx, runId, serializeEvents(runId, run.lastSeq, finalization.events));
    return outcome.status;
  });
  if (result === 'cancelled' || result === 'failed') metrics.runFinished(result, 0);
  return result !== 'driven';
}
