import { Injectable } from '@nestjs/common';
import type { ModelProvider, ModelStreamEvent } from '../llm/model-provider';
import type { ToolCallRow, ToolCallSettlement } from '../store/conversation-store.service';
import { RecordedRunStore, type RecordedCall } from '../store/recorded-run-store.service';
import type { RunRow } from '../store/run-store.service';
import type { ToolErrorCode } from '../tools/tool';
import type { TimedResult } from './run-tools.service';
import type { FinalOutcome } from './run-finalization';
import { errorSettlement } from './tool-results';

/**
 * A replayed call decided as the original was: one answered when its step was planned (refused,
 * invalid…) gets the same answer now; any other runs — answered from the record when it is run, so
 * its result follows the step as the original's did, with nobody asked to approve and no client
 * waited for.
 */
export function recordedDecision(original: RecordedCall | undefined): {
  executor: 'server' | 'client';
  status: 'pending' | 'error';
  settlement: ToolCallSettlement | null;
} {
  if (original?.atPlan && original.result !== null) {
    const code = (original.errorCode ?? 'EXECUTION_ERROR') as ToolErrorCode;
    return { executor: 'server', status: 'error', settlement: errorSettlement(code, original.result) };
  }
  return { executor: original?.executor ?? 'server', status: 'pending', settlement: null };
}

/** The part of a run that says whether (and up to which step) it is a replay. */
export type ReplayedRun = Pick<RunRow, 'replay'>;

/**
 * A replayed run's model call where the original's ended the run: it failed as the original's did
 * (`called`: the original made this call, and it is counted again as it was), or the original
 * ended before it — cancelled, or never finished — and made no call to count.
 */
export class RecordedFailure extends Error {
  constructor(
    readonly outcome: FinalOutcome,
    readonly called: boolean,
  ) {
    super(outcome.status === 'failed' ? outcome.error.message : outcome.why);
    this.name = 'RecordedFailure';
  }
}

/**
 * A replayed run's record ("Fork and replay"): a model that answers each recorded step with what the
 * original run's model answered, and the calls' results as the original's tools (or its people, or
 * its client) gave them. The loop uses them like any model and any tool — so a replay is a run like
 * any other, written by the journal — for the steps its run row names (`replay.steps`, null: all);
 * after those it goes on live.
 */
@Injectable()
export class RecordedRuns {
  constructor(private readonly store: RecordedRunStore) {}

  /** The replay's run id when step `iteration` of `run` comes from the record; null when it is live. */
  private recordedOf(run: ReplayedRun, iteration: number): string | null {
    const replay = run.replay;
    if (!replay) return null;
    return replay.steps === null || iteration <= replay.steps ? replay.of : null;
  }

  /** The model that answers step `iteration` of `run` from the record; undefined when it is live. */
  model(run: ReplayedRun, iteration: number): ModelProvider | undefined {
    const of = this.recordedOf(run, iteration);
    return of === null ? undefined : { stream: () => this.answer(of, iteration) };
  }

  /**
   * The original's answer to step `iteration`: its reasoning and its text, each as one delta (the
   * original's deltas are not kept), then its finish — the tool calls, usage and model it had. No
   * `tool_call_delta`: nothing runs. A step the original never finished ends
   * the replay as the original ended (RecordedFailure).
   */
  private async *answer(runId: string, iteration: number): AsyncGenerator<ModelStreamEvent, void, undefined> {
    const answer = await this.store.answer(runId, iteration);
    if (answer === null) {
      const ending = await this.store.ending(runId);
      if (ending?.status === 'failed' && ending.error !== null) {
        throw new RecordedFailure({ status: 'failed', error: ending.error }, true);
      }
      if (ending?.status === 'cancelled') {
        throw new RecordedFailure(
          { status: 'cancelled', why: 'The replayed run was cancelled here.' },
          false,
        );
      }
      const error = {
        code: 'REPLAY_ENDED',
        message: `The replayed run has no step ${iteration}: it ended before it.`,
        retryable: false,
      };
      throw new RecordedFailure({ status: 'failed', error }, false);
    }
    if (answer.reasoning) yield { type: 'reasoning', delta: answer.reasoning };
    if (answer.text !== '') yield { type: 'text', delta: answer.text };
    const { costUsd: _cost, ...usage } = answer.usage;
    yield {
      type: 'finish',
      finishReason: answer.finishReason,
      usage,
      toolCalls: answer.toolCalls.map((c) => ({
        id: c.id,
        name: c.name,
        arguments: c.arguments,
        ...(c.extraContent ? { extraContent: c.extraContent } : {}),
      })),
      ...(answer.providerData ? { providerData: answer.providerData } : {}),
      ...(answer.model ? { model: answer.model } : {}),
    };
  }

  /** The calls of step `iteration` as the original stored them; null when the step is live. */
  async calls(run: ReplayedRun, iteration: number): Promise<RecordedCall[] | null> {
    const of = this.recordedOf(run, iteration);
    return of === null ? null : this.store.calls(of, iteration);
  }

  /**
   * Where each of a recorded step's `calls` came in the original, by the order of their results
   * (0 first); null when the step is live.
   */
  async ranks(
    run: ReplayedRun,
    calls: readonly Pick<ToolCallRow, 'iteration' | 'position'>[],
  ): Promise<number[] | null> {
    if (calls.length === 0) return null;
    const recorded = await this.calls(run, calls[0].iteration);
    if (recorded === null) return null;
    const seqOf = (c: Pick<ToolCallRow, 'position'>) =>
      recorded.find((r) => r.position === c.position)?.resultSeq ?? Number.MAX_SAFE_INTEGER;
    const order = calls
      .map((c, i) => ({ i, seq: seqOf(c), position: c.position }))
      .sort((a, b) => a.seq - b.seq || a.position - b.position);
    const ranks = new Array<number>(calls.length);
    order.forEach((o, rank) => (ranks[o.i] = rank));
    return ranks;
  }

  /**
   * A recorded call's result as the original's tool, person or client gave it, in place of running
   * it; null when its step is live. A call the original never answered is answered as cancelled.
   */
  async result(
    run: ReplayedRun,
    call: Pick<ToolCallRow, 'iteration' | 'position'>,
  ): Promise<TimedResult | null> {
    const recorded = await this.calls(run, call.iteration);
    if (recorded === null) return null;
    const original = recorded.find((c) => c.position === call.position);
    if (!original || original.result === null) {
      return {
        result: {
          content: 'Not run: the replayed run never answered this call.',
          isError: true,
          errorCode: 'CANCELLED',
        },
        durationMs: 0,
      };
    }
    return {
      result: {
        content: original.result,
        isError: original.isError,
        ...(original.isError
          ? { errorCode: (original.errorCode ?? 'EXECUTION_ERROR') as ToolErrorCode }
          : {}),
        ...(original.truncated ? { truncated: true } : {}),
        ...(original.changes ? { changes: original.changes } : {}),
      },
      durationMs: original.durationMs ?? 0,
      parts: original.parts,
    };
  }
}
