import { Injectable } from '@nestjs/common';
import { CallsAhead } from './calls-ahead.service';
import { ModelCalls } from './model-calls.service';
import type { RunHandle } from './run-handle';
import { RunAccounting, type ReservedAhead } from './run-accounting.service';
import type { StepRecord } from './step-record';

/** Tokens reserved ahead for each result a step's calls have still to give (`aheadOf`). */
const RESULT_ALLOWANCE_TOKENS = 2_048;

const NOTHING = (): void => undefined;

/**
 * The loop's first stage, "check the limits, fit the window" (RunOrchestrator): a run's next model
 * call made ready — room in its context window, and under a limit its reservation: made with the
 * start (CallsAhead), ahead while the step before it was stored, or now (RunAccounting).
 */
@Injectable()
export class NextCalls {
  constructor(
    private readonly calls: ModelCalls,
    private readonly accounting: RunAccounting,
    private readonly sending: CallsAhead,
  ) {}

  /**
   * Readies the run's next model call: room made in the context window (which may take a summary,
   * a model call of its own, reserved like this one), then, under a limit, the call reserved on
   * every limit (RunAccounting) — unless it went out with the start, reserved then (CallsAhead), or
   * was reserved `ahead` once the step before it was stored (`aheadOf`) for at least the prompt
   * it has now: the output tokens it may ask for (undefined: no limit, LLM_MAX_OUTPUT_TOKENS).
   * Throws BudgetSpent when a limit leaves either call no room.
   */
  async ready(h: RunHandle, ahead?: Promise<ReservedAhead | undefined>): Promise<number | undefined> {
    const early = await ahead;
    let granted = early?.granted ?? null;
    // Not granted, or room must be made first (a summary reserves for itself): what the run holds
    // is given back, and the call is reserved below once room is made.
    if (early !== undefined && (granted === null || !this.calls.fitsAhead(h))) {
      await this.accounting.giveBack(h);
      granted = null;
    }
    await this.calls.makeRoom(h);
    const reserved = this.sending.reservedFirst(h);
    if (reserved !== undefined) return reserved;
    if (!(await this.accounting.limited(h))) return undefined;
    const promptTokens = await this.calls.promptTokens(h);
    if (early !== undefined && granted !== null) {
      if (promptTokens <= early.promptTokens) return granted;
      // Results longer than the allowance: the call is reserved again for what it is.
      await this.accounting.giveBack(h);
    }
    return this.accounting.reserve(h, promptTokens);
  }

  /**
   * Under a limit, the next call of a step that goes on is reserved while the step's calls run
   * (RunAccounting.reserveAhead) — for the conversation as it will stand, with
   * RESULT_ALLOWANCE_TOKENS for each result to come — when the conversation surely fits the window as
   * it is (no room to make first). The reservation waits for the step's record to commit
   * (`stored`): it replaces what the run holds, so before that the step's own call would be neither
   * reserved nor stored, and a limit could be passed. The step's statement keeps what the run holds
   * reserved (RunOrchestrator.commitStep). The run's end waits for it (RunHandle.trackWrite), so the
   * end gives back all that the run holds. Undefined when nothing is reserved ahead; else what
   * starts it, once the step's record is on its way.
   *
   * Its gain: under a key's budget the reservation, a statement, is no longer between the step's
   * calls and the next model call.
   */
  aheadOf(
    h: RunHandle,
    step: StepRecord,
  ): ((stored: Promise<void>) => Promise<ReservedAhead | undefined>) | undefined {
    if (step.outcome !== 'continue') return undefined;
    const conversation = [...h.conversation, ...step.messages];
    const source = { run: h.run, session: h.session, toolset: h.toolset, conversation };
    if (!this.calls.fitsAhead(source)) return undefined;
    return (stored) => {
      const reserving = stored.then(
        async () => {
          if (!(await this.accounting.limited(h))) return undefined;
          const allowance = step.runnable.length * RESULT_ALLOWANCE_TOKENS;
          return this.accounting.reserveAhead(h, (await this.calls.promptTokens(source)) + allowance);
        },
        // The record failed, and the run stops with it: nothing was reserved.
        () => undefined,
      );
      h.trackWrite(reserving.then(NOTHING, NOTHING));
      return reserving;
    };
  }
}
