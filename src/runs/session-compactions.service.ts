import { Injectable } from '@nestjs/common';
import { BudgetGuard, budgetExceeded } from '../agent/budget-guard';
import { ContextWindow } from '../agent/context-window';
import { RunAccounting } from '../agent/run-accounting';
import { RunOrchestrator } from '../agent/run-orchestrator.service';
import { DomainError, ErrorCode } from '../common/domain-error';
import { ModelError } from '../llm/model-provider';
import { NO_TRACE } from '../observability/run-tracing';
import { SessionsService } from '../sessions/sessions.service';
import { ConversationStore, type MessageRow } from '../store/conversation-store.service';
import { RunStore } from '../store/run-store.service';

/**
 * `POST /v1/sessions/:id/compact`: summarizes a session's older messages on demand (everything
 * before the newest user message's turn), stored as a compaction during a run would be. Only while
 * no run is active: the summary is stored under the session's row lock, and only when nothing was
 * added to the conversation (no run started) while the summary was being written. The summary is
 * a model call of the key's like any: checked against its budget first (a spent key gets the 429 a
 * start would), its usage stored with the summary and counted in the key's windows.
 */
@Injectable()
export class SessionCompactions {
  constructor(
    private readonly sessions: SessionsService,
    private readonly conversation: ConversationStore,
    private readonly store: RunStore,
    private readonly window: ContextWindow,
    private readonly orchestrator: RunOrchestrator,
    private readonly budgets: BudgetGuard,
    private readonly accounting: RunAccounting,
  ) {}

  async compact(owner: string, sessionId: string): Promise<MessageRow> {
    const { session, activeRunId } = await this.sessions.findWithActiveRun(owner, sessionId);
    if (activeRunId) throw busy(sessionId, activeRunId);
    const over = await this.budgets.keyExceeded(owner);
    if (over) throw budgetExceeded(over);
    const rows = await this.conversation.runConversation(sessionId);
    const model = session.model ?? this.orchestrator.defaultModel;
    const compaction = await this.window
      .summarizeOlder(model, rows, {
        of: { runId: null, sessionId, owner },
        iteration: 0,
        trace: NO_TRACE,
        signal: new AbortController().signal,
        // Spent though it failed after it streamed: stored on its own.
        lost: (call) => this.accounting.storeSessionCall(call.row),
      })
      .catch((err: unknown) => {
        // The model's failure is the answer's, as a 502 naming it; anything else is ours.
        if (!(err instanceof ModelError)) throw err;
        throw new DomainError(ErrorCode.ModelFailed, `The summary's model call failed: ${err.message}`, {
          code: err.code,
          retryable: err.retryable,
        });
      });
    const call = compaction?.summaryCall;
    // Spent whether or not the summary is kept below: its usage is stored on its own, first.
    if (call) await this.accounting.storeSessionCall(call.row);
    if (!compaction?.summaryRow) {
      throw new DomainError(
        ErrorCode.SessionBusy,
        `Session ${sessionId} has nothing older than its newest prompt to summarize`,
      );
    }
    await this.store.transaction(async (tx) => {
      const now = await this.conversation.lockSession(tx, sessionId);
      if (now?.activeRunId) throw busy(sessionId, now.activeRunId);
      if (!now || now.nextMessageSeq !== session.nextMessageSeq) {
        throw new DomainError(
          ErrorCode.SessionBusy,
          `Session ${sessionId} changed while it was being summarized`,
        );
      }
      await this.conversation.storeCompaction(tx, sessionId, null, compaction.write);
    });
    return compaction.summaryRow;
  }
}

function busy(sessionId: string, runId: string): DomainError {
  return new DomainError(ErrorCode.SessionBusy, `Session ${sessionId} has an active run`, { runId });
}
