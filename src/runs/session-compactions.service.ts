import { Injectable } from '@nestjs/common';
import { ContextWindow } from '../agent/context-window';
import { RunOrchestrator } from '../agent/run-orchestrator.service';
import { DomainError, ErrorCode } from '../common/domain-error';
import { SessionsService } from '../sessions/sessions.service';
import { ConversationStore, type MessageRow } from '../store/conversation-store.service';
import { RunStore } from '../store/run-store.service';

/**
 * `POST /v1/sessions/:id/compact`: summarizes a session's older messages on demand (everything
 * before the newest user message's turn), stored as a compaction during a run would be. Only while
 * no run is active: the summary is stored under the session's row lock, and only when nothing was
 * added to the conversation (no run started) while the summary was being written.
 */
@Injectable()
export class SessionCompactions {
  constructor(
    private readonly sessions: SessionsService,
    private readonly conversation: ConversationStore,
    private readonly store: RunStore,
    private readonly window: ContextWindow,
    private readonly orchestrator: RunOrchestrator,
  ) {}

  async compact(owner: string, sessionId: string): Promise<MessageRow> {
    const { session, activeRunId } = await this.sessions.findWithActiveRun(owner, sessionId);
    if (activeRunId) throw busy(sessionId, activeRunId);
    const rows = await this.conversation.runConversation(sessionId);
    const model = session.model ?? this.orchestrator.defaultModel;
    const compaction = await this.window.summarizeOlder(model, rows, new AbortController().signal);
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
