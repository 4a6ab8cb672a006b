import { Injectable, Logger } from '@nestjs/common';
import { callKey } from '../agent/call-key';
import type { TakeOverReason } from '../agent/run-takeover.service';
import { ConversationStore } from '../store/conversation-store.service';
import { RunStore } from '../store/run-store.service';
import { SessionStore } from '../store/session-store.service';
import { splitModelName } from '../llm/model-name';
import { RunTracing } from '../observability/run-tracing.service';
import { DrivenRuns } from './driven-runs.service';

/**
 * Runs driven on from what is stored, on whichever process claimed them: after a wait for a person
 * or the client (take-up), or after their process died or shut down (take-over). The run's row is
 * already leased to this process; nothing of it is in memory, so everything is read back.
 */
@Injectable()
export class ResumedRuns {
  private readonly logger = new Logger(ResumedRuns.name);

  constructor(
    private readonly store: RunStore,
    private readonly conversation: ConversationStore,
    private readonly sessionStore: SessionStore,
    private readonly driven: DrivenRuns,
    private readonly tracing: RunTracing,
  ) {}

  /** Takes up a run this process has just claimed after a wait (status `running`, leased to it). */
  takeUp(runId: string): Promise<void> {
    // The claim committed a moment ago and set the lease from then: count from about that time.
    return this.resume(runId, Date.now());
  }

  /**
   * Drives a run this process has just taken over from one that died or shut down (leased to it
   * since `claimedAt`); the loop first closes what the lost process left cut (RunTakeover).
   */
  takeOver(runId: string, reason: TakeOverReason, claimedAt: number): Promise<void> {
    this.logger.log({ runId, reason, msg: 'taking the run over' });
    return this.resume(runId, claimedAt, reason);
  }

  /** Rebuilds a run this process has claimed from the database, and drives it on. */
  private async resume(runId: string, claimedAt: number, takeOver?: TakeOverReason): Promise<void> {
    const run = await this.store.findRun(runId);
    if (!run || run.status !== 'running' || run.leaseOwner !== this.driven.processId) return;
    const session = await this.sessionStore.find(run.sessionId, null);
    if (!session) return;
    const [conversation, previousCalls] = await Promise.all([
      this.conversation.runConversation(run.sessionId),
      this.conversation.runToolCallKeys(runId),
    ]);
    const callIds = new Set(previousCalls.map((c) => c.callId));
    const callCounts = new Map<string, number>();
    for (const c of previousCalls)
      callCounts.set(
        callKey(c.name, c.rawArguments),
        (callCounts.get(callKey(c.name, c.rawArguments)) ?? 0) + 1,
      );
    const firstSeq = conversation.find((m) => m.runId === runId && m.role === 'user')?.seq ?? 0;
    // The same trace as the run's first stretch, on whichever process drives it now.
    const trace = this.tracing.startRun(
      { runId, sessionId: run.sessionId, ...splitModelName(run.model), endUser: run.endUser },
      run.traceParent,
      takeOver !== undefined,
    );
    if (takeOver !== undefined && trace.traceParent !== null) {
      // What follows (stretches after a wait, settled calls) hangs under this stretch's span, which
      // this process exports; the lost process's may never have been. A failed write costs only that.
      await this.store
        .transaction((tx) => this.store.updateRun(tx, runId, { traceParent: trace.traceParent }))
        .catch((err: unknown) =>
          this.logger.warn({ runId, msg: `the run's traceparent was not stored: ${String(err)}` }),
        );
    }
    const h = this.driven.newHandle(
      {
        run,
        session,
        conversation,
        callIds,
        callCounts,
        firstMessageSeq: firstSeq,
        nextMessageSeq: session.nextMessageSeq,
        resumesStep: true,
        takeOver,
        trace,
      },
      claimedAt,
    );
    if (run.cancelRequested) h.stop('cancelled');
    this.driven.launch(h);
  }
}
