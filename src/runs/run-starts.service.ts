import { Injectable } from '@nestjs/common';
import { DomainError, ErrorCode } from '../common/domain-error';
import type { SerializedEvent } from '../events/run-events';
import { splitModelName } from '../llm/model-name';
import { RunTracing, type RunTrace } from '../observability/run-tracing.service';
import type { Toolset } from '../tools/toolset';
import { ConversationStore, type MessageRow } from '../store/conversation-store.service';
import type { NewRun, StartOutcome } from '../store/run-start-store.service';
import { RunStore, type Queryable, type RunRow } from '../store/run-store.service';
import type { SessionRow } from '../store/session-store.service';
import { SessionHasActiveRun } from '../store/store-errors';
import { sessionNotFound } from '../sessions/sessions.service';
import { CallsAhead } from '../agent/calls-ahead.service';
import type { FirstCall } from '../agent/run-handle';
import { newSessionConversation, storedMessage } from './start-conversation';
import { StartLimits } from './start-limits.service';
import { sessionBusy, StartPlans, type StartPlan } from './start-plans.service';
import type { StartedRun, StartRun } from './start-run';
import { StartReplays } from './start-replays.service';

/** A run its start has stored, leased to the starting process, for it to drive. */
export interface OpenedRun {
  run: RunRow;
  session: SessionRow;
  /** The session's messages, the prompt included. */
  conversation: MessageRow[];
  firstEvent: SerializedEvent;
  /** The prompt's position in the session. */
  promptSeq: number;
  nextMessageSeq: number;
  /** When the lease was about to be written: the process counts on no more lease than it has. */
  leasedAt: number;
  /** The session's tools, as the run offers them. */
  toolset: Toolset;
  /** The run's first model call, when it went out with the start (CallsAhead); its controller is the run's. */
  firstCall?: FirstCall;
  /** The run's trace (its first `invoke_agent` span). */
  trace: RunTrace;
}

/**
 * A start request, top to bottom: its plan (StartPlans: the session found or drafted — a busy one is
 * refused here —, the run and its first event), its first model call sent ahead while the start
 * commits (CallsAhead), its Idempotency-Key claimed in the run's own transaction (StartReplays),
 * the server's and the key's limits (StartLimits), then the run with its prompt and first event,
 * written by one statement (RunStartStore.start) — once more after the key's lock when the key is
 * near one of its limits. Refusals store nothing, the key included.
 */
@Injectable()
export class RunStarts {
  constructor(
    private readonly store: RunStore,
    private readonly conversation: ConversationStore,
    private readonly plans: StartPlans,
    private readonly limits: StartLimits,
    private readonly replays: StartReplays,
    private readonly callsAhead: CallsAhead,
    private readonly tracing: RunTracing,
  ) {}

  /**
   * Stores the new run leased to `processId`, which drives `localRuns` runs now; or, when an earlier
   * request claimed the same Idempotency-Key, answers with that request's run and stores nothing.
   */
  async open(
    owner: string,
    input: StartRun,
    processId: string,
    localRuns: number,
  ): Promise<{ earlier: StartedRun } | { opened: OpenedRun }> {
    let plan: StartPlan;
    try {
      plan = await this.plans.plan(owner, input, processId);
    } catch (err) {
      const earlier = await this.replays.ofBusySession(owner, input.idempotency, err);
      if (earlier) return { earlier };
      throw err;
    }
    const spender = { owner, endUser: plan.session.endUser };
    const of = { runId: plan.start.run.id, sessionId: plan.start.run.sessionId, ...spender };
    // A replay of an Idempotency-Key starts nothing, so it sends nothing ahead; a child run's call
    // may be held by the limits of the runs above it, which the loop reads (RunAccounting).
    const ahead =
      input.idempotency || input.delegation || !this.limits.maySendAhead(plan.session, localRuns)
        ? undefined
        : this.callsAhead.sendWithStart(plan.start.run, plan.session, plan.toolset, () =>
            this.conversationAhead(plan),
          );
    let trace: RunTrace | undefined;
    const stored = async (tx?: Queryable): Promise<{ earlier: StartedRun } | { opened: OpenedRun }> => {
      // First, so that a request refused below leaves the key unused (the transaction rolls back).
      if (input.idempotency && tx) {
        const earlier = await this.replays.claim(tx, owner, input.idempotency, plan.start.run.id);
        if (earlier) return { earlier };
      }
      // A first call reserved with the start showed the key's budget has room: no look at it.
      const reserved = (await ahead?.reserved) ?? null;
      await this.limits.assertMayStart(spender, localRuns, reserved !== null);
      trace = this.tracing.startRun(
        {
          runId: plan.start.run.id,
          sessionId: plan.start.run.sessionId,
          ...splitModelName(plan.start.run.model),
          endUser: plan.session.endUser,
        },
        input.traceParent,
      );
      plan.start.run.traceParent = trace.traceParent;
      const leasedAt = Date.now();
      const outcome = await this.limits.startWithinLimits(plan.start, tx);
      this.callsAhead.startAdmitted(owner, outcome.counts);
      const opened = await this.opened(plan, outcome, leasedAt, tx);
      return {
        opened: { ...opened, trace, firstCall: await this.callsAhead.keep(ahead, opened.conversation, of) },
      };
    };
    try {
      return input.idempotency ? await this.store.transaction((tx) => stored(tx)) : await stored();
    } catch (err) {
      this.callsAhead.startFailed(ahead, of, err);
      trace?.end('refused');
      // Another request started a run on this session between our look and our insert.
      if (!(err instanceof SessionHasActiveRun)) throw err;
      const running = await this.store.activeRunOfSession(this.store.queryable, plan.start.run.sessionId);
      throw sessionBusy(plan.start.run.sessionId, running ?? '');
    }
  }

  /**
   * The conversation the start statement will store, for the call sent with it: a new session's
   * system message and prompt; an existing session's messages read beside the statement, then the
   * prompt where the statement will put it — unless a message lands before it (then the stored
   * conversation differs and the call is not kept). Undefined for an answer given again
   * (`regenerate`): what it answers is known only once the statement ran.
   */
  private conversationAhead({ start, session }: StartPlan): MessageRow[] | Promise<MessageRow[]> | undefined {
    const { run, answers } = start;
    if (answers.kind === 'new-session') return newSessionConversation(answers, run.id, new Date());
    if (answers.kind === 'regenerate') return undefined;
    const promptSeq = (session as SessionRow).nextMessageSeq;
    return this.conversation
      .runConversation(run.sessionId)
      .then((history) => [
        ...history.filter((m) => m.seq < promptSeq),
        storedMessage(answers.prompt, 'user', promptSeq, run.id, new Date()),
      ]);
  }

  /**
   * The stored run as its process drives it, with the session's conversation up to its prompt —
   * read in the start's transaction `tx` when there is one, the only connection that sees the prompt
   * before the commit.
   */
  private async opened(
    plan: StartPlan,
    outcome: Extract<StartOutcome, { admitted: true }>,
    leasedAt: number,
    tx: Queryable | undefined,
  ): Promise<Omit<OpenedRun, 'firstCall' | 'trace'>> {
    const { start } = plan;
    const { run, answers } = start;
    if (outcome.promptSeq === null) {
      // Nothing was stored: the statement found no session to add to, or no prompt to answer again.
      if (answers.kind === 'regenerate') {
        throw new DomainError(
          ErrorCode.InvalidRequest,
          `Session ${run.sessionId} has no prompt to answer again`,
        );
      }
      throw sessionNotFound(run.sessionId);
    }
    const promptSeq = outcome.promptSeq;
    let session: SessionRow;
    let conversation: MessageRow[];
    if (answers.kind === 'new-session' && outcome.session) {
      // Nothing to read: the session holds just what this start wrote.
      session = outcome.session;
      conversation = newSessionConversation(answers, run.id, session.createdAt);
    } else {
      session = plan.session as SessionRow;
      // In the start's transaction when there is one: the only connection that sees the prompt yet.
      conversation = await this.conversation.runConversation(session.id, tx);
    }
    return {
      run: newRunRow(run, session.endUser),
      session,
      conversation,
      firstEvent: plan.firstEvent,
      toolset: plan.toolset,
      promptSeq,
      nextMessageSeq: answers.kind === 'regenerate' ? session.nextMessageSeq : promptSeq + 1,
      leasedAt,
    };
  }
}

function newRunRow(row: NewRun, endUser: string | null): RunRow {
  return {
    ...row,
    endUser,
    replay: row.replay ?? null,
    status: 'running',
    iterations: 0,
    promptTokens: 0,
    completionTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    usageEstimated: false,
    costUsd: null,
    error: null,
    lastSeq: 1,
    finalMessageId: null,
    leaseExpired: false,
    cancelRequested: false,
    outputCorrections: 0,
    createdAt: new Date(),
    finishedAt: null,
  };
}
