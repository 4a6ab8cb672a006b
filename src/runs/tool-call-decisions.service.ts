import { Injectable } from '@nestjs/common';
import { DomainError, ErrorCode } from '../common/domain-error';
import { Metrics } from '../metrics/metrics.service';
import type { ToolCallApproval } from '../persistence/entities/tool-call.entity';
import { ToolRegistry } from '../tools/tool-registry.service';
import {
  ConversationStore,
  type ToolCallRow,
  type ToolCallSettlement,
} from '../store/conversation-store.service';
import { serializeEvents, type RunEventBody } from '../events/run-events';
import { RunStore, type Queryable, type RunChanges, type RunRow } from '../store/run-store.service';

import { runNotFound } from './runs.service';
import { DrivenRuns } from './driven-runs.service';
import { ResumedRuns } from './resumed-runs.service';
import { errorSettlement, resultEvent } from '../agent/tool-results';
import { RunTracing, type TracedToolCall } from '../observability/run-tracing.service';

export type Decision =
  | { kind: 'approval'; approve: boolean; reason?: string; arguments?: Record<string, unknown> }
  | { kind: 'result'; content: string; isError: boolean };

/** A call given its result by a decision, in the transaction that stores it. */
interface Settled {
  call: ToolCallRow;
  settlement: ToolCallSettlement;
  /** What the call had waited for, and what ended the wait (for its span). */
  waitedFor: NonNullable<TracedToolCall['waitedFor']>;
  settledBy: NonNullable<TracedToolCall['settledBy']>;
}

/** A decision on the call a run knows as `toolCallId`. */
export type CallDecision = Decision & { toolCallId: string };

/** A `delegate` call answered by its child run's end, with the events announcing it (subagent_finished). */
export interface ChildAnswer {
  kind: 'child';
  toolCallId: string;
  content: string;
  isError: boolean;
  announce: RunEventBody[];
  /** The child's usage (its own tree's), rolled up into the run it answers. */
  usage: { promptTokens: number; completionTokens: number; costUsd: number | null } | null;
}

type Settling = CallDecision | ChildAnswer | { kind: 'expire'; toolCallId: string };

/**
 * Decisions on calls that wait: a person's approval or rejection, a client's result, or the
 * deadline passing. Each is applied under the run's row lock; the process that settles the last
 * waiting call of a step claims the run and continues it.
 */
@Injectable()
export class ToolCallDecisions {
  constructor(
    private readonly store: RunStore,
    private readonly conversation: ConversationStore,
    private readonly driven: DrivenRuns,
    private readonly resumed: ResumedRuns,
    private readonly registry: ToolRegistry,
    private readonly metrics: Metrics,
    private readonly tracing: RunTracing,
  ) {}

  /** Decides a call waiting for a person or the client; the process that decides the last one continues the run. */
  async decide(owner: string, runId: string, callId: string, decision: Decision): Promise<void> {
    await this.decideAll(owner, runId, [{ ...decision, toolCallId: callId }]);
  }

  /**
   * Decides several waiting calls of one run (a frontend message may carry several) all or none: one
   * transaction, so a refused decision leaves every call waiting. A call decided twice in one request
   * is a 400, nothing applied — which of the two a client meant cannot be told.
   */
  async decideAll(owner: string, runId: string, decisions: readonly CallDecision[]): Promise<void> {
    const seen = new Set<string>();
    for (const { toolCallId } of decisions) {
      if (seen.has(toolCallId)) {
        throw new DomainError(
          ErrorCode.InvalidRequest,
          `Tool call ${toolCallId} is decided more than once in this request; nothing was applied`,
        );
      }
      seen.add(toolCallId);
    }
    // A call of a run below this one (a child's) is decided here too, in its own run.
    const byRun = new Map<string, CallDecision[]>();
    for (const decision of decisions) {
      const target = await this.runOfCall(runId, decision.toolCallId);
      byRun.set(target, [...(byRun.get(target) ?? []), decision]);
    }
    if (byRun.size > 1 || !byRun.has(runId)) {
      // The run named in the path must be the caller's, whichever run holds the calls.
      const named = await this.store.findRun(runId, owner);
      if (!named) throw runNotFound(runId);
    }
    for (const [target, group] of byRun) {
      const claimed = await this.settleWaiting(target, group, owner);
      if (claimed) await this.resumed.takeUp(target);
    }
  }

  /** The run of `callId`: the one where it waits (`runId`'s own first), else where it is, in the tree below `runId`. */
  private async runOfCall(runId: string, callId: string): Promise<string> {
    const found = await this.conversation.waitingCallsBelow(this.store.queryable, runId, callId);
    return found[0]?.runId ?? runId;
  }

  /**
   * Answers a run's `delegate` call with its child's end (Delegations); the process that answers the
   * last waiting call continues the run, as after a decision. False when the call no longer waits
   * (another process answered it, or the run ended meanwhile).
   */
  async answerFromChild(runId: string, answer: ChildAnswer): Promise<void> {
    const claimed = await this.settleWaiting(runId, [answer], null).catch((err: unknown) => {
      if (!(err instanceof DomainError)) throw err;
      return false; // answered already, or the run has ended (a cancel)
    });
    if (claimed) await this.resumed.takeUp(runId);
  }

  /** Settles calls whose deadline passed (any process may; each call is settled once). */
  async expireWaitingCalls(): Promise<void> {
    const expired = await this.conversation.expiredWaitingCalls(this.store.queryable);
    for (const { runId, callId } of expired) {
      const claimed = await this.settleWaiting(runId, [{ kind: 'expire', toolCallId: callId }], null).catch(
        (err: unknown) => {
          if (!(err instanceof DomainError)) throw err;
          return false; // someone else settled it first
        },
      );
      if (claimed) await this.resumed.takeUp(runId);
    }
  }

  /**
   * Applies decisions to waiting calls of one run, in one transaction under the run's lock. Returns
   * true when no call is left waiting and this process has claimed the run to continue it.
   */
  private async settleWaiting(
    runId: string,
    decisions: readonly Settling[],
    owner: string | null,
  ): Promise<boolean> {
    const settled: Settled[] = [];
    const announced: RunEventBody[] = [];
    const childUsage: NonNullable<ChildAnswer['usage']>[] = [];
    // The run's trace, for the spans of the calls settled here (not run by the loop).
    let traceParent: string | null = null;
    const claimed = await this.store.transaction(async (tx) => {
      const run = await this.store.lockRun(tx, runId);
      if (!run || (owner !== null && run.owner !== owner)) throw runNotFound(runId);
      traceParent = run.traceParent;
      let applied = 0;
      for (const { toolCallId, ...decision } of decisions) {
        if (await this.settleOne(tx, run, toolCallId, decision, settled)) {
          applied++;
          if (decision.kind === 'child') {
            announced.push(...decision.announce);
            if (decision.usage) childUsage.push(decision.usage);
          }
        }
      }
      if (applied === 0) return false;
      const claimed = (await this.conversation.countWaitingToolCalls(tx, runId)) === 0;
      const changes: RunChanges = claimed ? { status: 'running', leaseOwner: this.driven.processId } : {};
      if (childUsage.length > 0) Object.assign(changes, rolledUp(run, childUsage));
      if (Object.keys(changes).length > 0) await this.store.updateRun(tx, runId, changes);
      const events = [
        ...announced,
        ...settled.map(({ call, settlement }) => resultEvent(call.callId, call.name, settlement)),
      ];
      await this.store.appendEvents(tx, runId, serializeEvents(runId, run.lastSeq, events));
      return claimed;
    });
    // Counted and traced once committed: a refused request settled nothing.
    for (const { call, settlement, waitedFor, settledBy } of settled) {
      this.metrics.toolCall(
        this.registry.metricName(call.name, call.executor),
        settlement.errorCode ?? 'ok',
        settlement.durationMs,
      );
      this.tracing.settledCall(traceParent, {
        name: call.name,
        callId: call.callId,
        ranAt: Date.now(),
        waitedSince: call.createdAt.getTime(),
        waitedFor,
        settledBy,
        isError: settlement.isError,
        errorCode: settlement.errorCode,
        arguments: () => call.rawArguments,
        result: () => settlement.result,
      });
    }
    return claimed;
  }

  /**
   * Applies one decision in the run's transaction, adding the call to `settled` when it has its
   * result; false when an expiry found the call no longer waiting (nothing to do). A decision on a
   * call not waiting for it throws.
   */
  private async settleOne(
    tx: Queryable,
    run: RunRow,
    callId: string,
    decision: Decision | Omit<ChildAnswer, 'toolCallId'> | { kind: 'expire' },
    settled: Settled[],
  ): Promise<boolean> {
    const runId = run.id;
    const call = await this.conversation.findToolCall(tx, runId, callId);
    if (!call)
      throw new DomainError(ErrorCode.ToolCallNotFound, `Tool call ${callId} not found in run ${runId}`);
    const waitingFor =
      call.status === 'pending_approval'
        ? 'approval'
        : call.status === 'awaiting_client'
          ? 'result'
          : call.status === 'awaiting_child'
            ? 'child'
            : null;
    if (decision.kind === 'expire') {
      if (run.status !== 'requires_action' || waitingFor === null) return false;
    } else {
      const expired = call.deadlineAt !== null && call.deadlineAt.getTime() <= Date.now();
      if (run.status !== 'requires_action' || waitingFor !== decision.kind || expired) {
        throw new DomainError(
          ErrorCode.ToolCallNotWaiting,
          `Tool call ${callId} is not waiting for ${decision.kind === 'result' ? 'a client result' : 'approval'}` +
            (expired ? ' (its deadline has passed)' : ''),
          { runId, status: call.status },
        );
      }
    }

    if (decision.kind === 'approval' && decision.approve && decision.arguments !== undefined) {
      // Edited arguments are checked like the model's; invalid ones are a 400 (the transaction
      // rolls back, so the call keeps waiting).
      this.checkEditedArguments(call.name, decision.arguments);
    }

    const decidedAt = new Date().toISOString();
    if (decision.kind === 'approval' && decision.approve) {
      const approval: ToolCallApproval = {
        approved: true,
        reason: decision.reason ?? null,
        editedArguments: decision.arguments ?? null,
        decidedAt,
      };
      await this.conversation.approveToolCall(tx, call.id, approval, decision.arguments);
      return true;
    }
    const settlement =
      decision.kind === 'approval'
        ? errorSettlement(
            'REJECTED',
            `A person rejected this call${decision.reason ? `: ${decision.reason}` : '.'} It was not run.`,
          )
        : decision.kind === 'result' || decision.kind === 'child'
          ? {
              status: decision.isError ? ('error' as const) : ('completed' as const),
              result: decision.content,
              isError: decision.isError,
              errorCode: decision.isError ? 'EXECUTION_ERROR' : null,
              truncated: false,
              durationMs: Date.now() - call.createdAt.getTime(),
              changes: null,
            }
          : errorSettlement(
              'EXPIRED',
              call.status === 'pending_approval'
                ? 'Nobody approved or rejected this call in time; it was not run.'
                : 'The client did not send a result for this call in time.',
            );
    const approval: ToolCallApproval | undefined =
      decision.kind === 'approval'
        ? { approved: false, reason: decision.reason ?? null, editedArguments: null, decidedAt }
        : undefined;
    await this.conversation.settleToolCall(tx, call, settlement, { approval });
    settled.push({
      call,
      settlement,
      waitedFor: waitingFor === 'result' || waitingFor === 'child' ? 'client' : 'approval',
      settledBy:
        decision.kind === 'expire'
          ? 'expired'
          : decision.kind === 'result' || decision.kind === 'child'
            ? 'client_result'
            : 'rejected',
    });
    return true;
  }

  private checkEditedArguments(toolName: string, args: Record<string, unknown>): void {
    const tool = this.registry.get(toolName);
    const check = tool ? this.registry.validate(tool, args) : { ok: true as const };
    if (!check.ok) throw new DomainError(ErrorCode.InvalidRequest, `arguments: ${check.message}`);
  }
}

/**
 * A run's usage with its ended children's added: a run's usage is its tree's ("Agents and
 * delegation"), so its `done.usage`, GET /v1/runs/:id and its session's limits count them.
 */
function rolledUp(run: RunRow, children: NonNullable<ChildAnswer['usage']>[]): RunChanges {
  let { promptTokens, completionTokens, costUsd } = run;
  for (const child of children) {
    promptTokens += child.promptTokens;
    completionTokens += child.completionTokens;
    if (child.costUsd !== null) costUsd = (costUsd ?? 0) + child.costUsd;
  }
  return { promptTokens, completionTokens, costUsd };
}
