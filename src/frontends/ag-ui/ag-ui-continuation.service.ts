import { Injectable } from '@nestjs/common';
import type { Message } from '@ag-ui/core';
import { DomainError, ErrorCode } from '../../common/domain-error';
import type { RunEvent } from '../../events/run-events';
import { ConversationStore } from '../../store/conversation-store.service';
import { RunStore } from '../../store/run-store.service';
import { knownToolCalls, lastStreamEnd } from './ag-ui-continuation';

/** Reading one run's whole event log, a page at a time. */
const EVENT_PAGE = 1000;

/**
 * An AG-UI input that asks for no new run (no new user message, no answer to a waiting client call):
 * the thread's own run, from where the client's last stream of it ended — after approvals given
 * through the API, the rest of the run, never a 409 for the thread's own run.
 */
@Injectable()
export class AgUiContinuation {
  constructor(
    private readonly store: RunStore,
    private readonly conversation: ConversationStore,
  ) {}

  /**
   * Whether some of the input's tool messages answer a client call the thread's run waits for; the
   * others are the client's record of results it was streamed (the @ag-ui/client keeps them).
   */
  async answersWaitingCall(sessionId: string, results: readonly { toolCallId: string }[]): Promise<boolean> {
    const runId = await this.store.activeRunOfSession(this.store.queryable, sessionId);
    if (!runId) return false;
    const waiting = await this.conversation.unsettledToolCalls(this.store.queryable, runId);
    const awaiting = new Set(waiting.filter((c) => c.status === 'awaiting_client').map((c) => c.callId));
    return results.some((r) => awaiting.has(r.toolCallId));
  }

  /** The thread's newest run and the last event of it the client has. */
  async resumePoint(
    sessionId: string,
    threadId: string,
    messages: readonly Message[],
  ): Promise<{ runId: string; after: number }> {
    const runId = await this.store.latestRunOfSession(sessionId);
    if (!runId) {
      throw new DomainError(
        ErrorCode.InvalidRequest,
        `Thread ${threadId} has no run to go on with: messages must end with a user message`,
      );
    }
    const events: RunEvent[] = [];
    for (let after = 0; ;) {
      const page = await this.store.eventsAfter(runId, after, EVENT_PAGE);
      for (const r of page) events.push({ ...(JSON.parse(r.data) as RunEvent), seq: r.seq });
      if (page.length < EVENT_PAGE) break;
      after = page[page.length - 1].seq;
    }
    return { runId, after: lastStreamEnd(events, knownToolCalls(messages)) };
  }
}
