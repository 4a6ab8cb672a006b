import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { BudgetGuard, budgetExceeded } from '../agent/budget-guard.service';
import { ContextWindow } from '../agent/context-window.service';
import { RunAccounting } from '../agent/run-accounting.service';
import type { SummaryCaller } from '../agent/summarizer.service';
import { BudgetStore } from '../store/budget-store.service';
import { DomainError, ErrorCode } from '../common/domain-error';
import { ModelError } from '../llm/model-provider';
import { ModelProviders } from '../llm/model-providers.service';
import { RunTracing } from '../observability/run-tracing.service';
import { Sessions } from '../sessions/sessions.service';
import type { SessionRow } from '../store/session-store.service';
import {
  ConversationStore,
  type CompactionClaim,
  type MessageRow,
} from '../store/conversation-store.service';
import { RunStore } from '../store/run-store.service';

/**
 * `POST /v1/sessions/:id/compact`: summarizes a session's older messages on demand (everything
 * before the newest user message's turn), stored as a compaction during a run would be. One at a
 * time and only while no run is active: the session's compaction is claimed in the database before
 * the model call (a second request, on any replica, is a 409 that spends nothing), and the summary
 * is stored under the session's row lock, only while the claim holds and nothing was added to the
 * conversation (no run started) while the summary was being written. The summary is
 * a model call of the key's like any: checked against its budget first (a spent key gets the 429 a
 * start would), reserved on the key's and its end user's limits before it is sent (one that does
 * not fit is that 429, and no call is made), its usage stored and counted in the key's windows.
 */
@Injectable()
export class SessionCompactions {
  constructor(
    private readonly sessions: Sessions,
    private readonly conversation: ConversationStore,
    private readonly store: RunStore,
    private readonly window: ContextWindow,
    private readonly models: ModelProviders,
    private readonly budgets: BudgetGuard,
    private readonly accounting: RunAccounting,
    private readonly tracing: RunTracing,
    private readonly budgetStore: BudgetStore,
  ) {}

  async compact(owner: string, sessionId: string): Promise<MessageRow> {
    const { session, activeRunId } = await this.sessions.findWithActiveRun(owner, sessionId);
    if (activeRunId) throw busy(sessionId, activeRunId);
    const over = await this.budgets.spent({ owner, endUser: session.endUser });
    if (over) throw budgetExceeded(over);
    const claim = await this.conversation.claimCompaction(sessionId);
    if (!claim) {
      throw new DomainError(
        ErrorCode.SessionBusy,
        `Session ${sessionId} is being compacted by another request, or a run has started`,
      );
    }
    try {
      return await this.summarize(owner, session, claim);
    } finally {
      // Let go on every way out but a stored summary (whose transaction let it go already: a no-op
      // here). A release that fails is safe to ignore: the claim expires by itself (COMPACTION_CLAIM_MS).
      await this.conversation.releaseCompaction(sessionId, claim).catch(() => undefined);
    }
  }

  /** The summary under the session's claim, stored only if the claim and the conversation still stand. */
  private async summarize(owner: string, session: SessionRow, claim: CompactionClaim): Promise<MessageRow> {
    const sessionId = session.id;
    const rows = await this.conversation.runConversation(sessionId);
    const model = session.model ?? this.models.defaultModel;
    const spender = { owner, endUser: session.endUser };
    // What the summary reserves is held by an id of its own (it has no run), given back by the
    // statement that stores its call, or below when none is stored.
    const holder = randomUUID();
    let reserved = false;
    try {
      return await this.summarizeAs(holder, session, claim, rows, model, {
        of: { runId: null, sessionId, ...spender },
        iteration: 0,
        trace: this.tracing.outsideRun(),
        signal: new AbortController().signal,
        // Spent though it failed after it streamed: stored on its own.
        lost: (call) => this.accounting.storeSessionCall(call.row, holder),
        reserve: async (promptTokens, maxTokens) => {
          reserved = await this.accounting.reserveSessionCall(
            holder,
            spender,
            model,
            promptTokens,
            maxTokens,
          );
        },
      });
    } finally {
      if (reserved) await this.budgetStore.release(holder);
    }
  }

  private async summarizeAs(
    holder: string,
    session: SessionRow,
    claim: CompactionClaim,
    rows: MessageRow[],
    model: string,
    caller: SummaryCaller,
  ): Promise<MessageRow> {
    const sessionId = session.id;
    const compaction = await this.window.summarizeOlder(model, rows, caller).catch((err: unknown) => {
      // The model's failure is the answer's, as a 502 naming it; anything else is ours.
      if (!(err instanceof ModelError)) throw err;
      throw new DomainError(ErrorCode.ModelFailed, `The summary's model call failed: ${err.message}`, {
        code: err.code,
        retryable: err.retryable,
      });
    });
    const call = compaction?.summaryCall;
    // Spent whether or not the summary is kept below: its usage is stored on its own, first.
    if (call) await this.accounting.storeSessionCall(call.row, holder);
    if (!compaction?.summaryRow) {
      throw new DomainError(
        ErrorCode.SessionBusy,
        `Session ${sessionId} has nothing older than its newest prompt to summarize`,
      );
    }
    await this.store.transaction(async (tx) => {
      const now = await this.conversation.lockSession(tx, sessionId);
      if (now?.activeRunId) throw busy(sessionId, now.activeRunId);
      const released = now ? await this.conversation.releaseCompaction(sessionId, claim, tx) : false;
      if (!now || now.nextMessageSeq !== claim.nextMessageSeq || !released) {
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
