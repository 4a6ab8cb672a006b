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
 * An AG-UI input that asks for no new run: tool messages answering the thread's waiting client calls
 * (checked before anything is settled), or nothing new — then the thread's own run, from where the
 * client's last stream of it ended: after approvals given through the API, the rest of the run,
 * never a 409 for the thread's own run.
 */
@Injectable()
export class AgUiContinuation {
  constructor(
    private readonly store: RunStore,
    private readonly conversation: ConversationStore,
  ) {}

  /**
   * Checks that the input's tool messages answer client calls the thread's run (or a run below it)
   * waits for, before
   * anything is settled: a `409` when none does, or when one names a call of the run that waits for
   * something else (an approval — a result cannot stand in for a person's decision). Messages for
   * calls the run no longer waits for, beside an answer, are the client's record of what it was
   * streamed or answered before (the @ag-ui/client keeps them): left alone.
   */
  async assertAnswersWaitingCalls(
    sessionId: string,
    threadId: string,
    results: readonly { toolCallId: string }[],
  ): Promise<void> {
    const runId = await this.store.activeRunOfSession(this.store.queryable, sessionId);
    // The run's own unsettled calls, and the calls waiting below it (a child's client calls are the thread's).
    const [unsettled, below] = runId
      ? await Promise.all([
          this.conversation.unsettledToolCalls(this.store.queryable, runId),
          this.conversation.waitingCallsBelow(this.store.queryable, runId),
        ])
      : [[], []];
    const status = new Map([...below, ...unsettled].map((c) => [c.callId, c.status]));
    const answers = results.filter((r) => status.get(r.toolCallId) === 'awaiting_client');
    const other = results.find(
      (r) => status.has(r.toolCallId) && status.get(r.toolCallId) !== 'awaiting_client',
    );
    if (answers.length > 0 && !other) return;
    const why = other
      ? status.get(other.toolCallId) === 'pending_approval'
        ? `tool call ${other.toolCallId} waits for an approval (given through the API), not a tool message`
        : `tool call ${other.toolCallId} does not wait for a client result`
      : `the tool messages answer no client call the run of thread ${threadId} waits for`;
    throw new DomainError(
      ErrorCode.ToolCallNotWaiting,
      `Nothing was settled: ${why}`,
      runId ? { runId } : {},
    );
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
