import { Inject, Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import type { RunEventBody } from '../events/run-events';
import { fullModelName } from '../llm/model-name';
import { ModelPrices } from '../llm/model-prices';
import { BudgetStore } from '../store/budget-store.service';
import { RunJournal } from '../store/run-journal';
import { UsageStore, type NewModelCall, type SpentCall } from '../store/usage-store.service';
import { BudgetGuard, MIN_CALL_TOKENS, MIN_OUTPUT_TOKENS } from './budget-guard';
import type { RunHandle } from './run-handle';
import { runUsage } from './step-record';

/** How long a run whose call does not fit waits between two tries while other calls are in flight. */
const WAIT_FIRST_MS = 20;
const WAIT_MAX_MS = 500;

/** Per token, in USD: what the prompt and the output of a call may cost at most (0: no price). */
interface TokenPrices {
  input: number;
  output: number;
}

/**
 * A run's spending, at the loop's few points: before each model call, the reservation that lets it
 * go out (`reserve`: the session's per-run limits in memory, the key's and its end user's on the
 * budget counters, BudgetGuard); a model call's usage row (ModelCallRecorder's, in the journal entry
 * of its step) with the counters it moves and the reservation it gives back.
 */
@Injectable()
export class RunAccounting {
  private readonly prices = new Map<string, TokenPrices>();

  constructor(
    private readonly usage: UsageStore,
    private readonly budgets: BudgetGuard,
    private readonly store: BudgetStore,
    private readonly journal: RunJournal,
    private readonly modelPrices: ModelPrices,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'llm'>,
  ) {}

  /**
   * Stores a model call made for a session outside any run (the summary of `POST
   * /v1/sessions/:id/compact`), as ModelCallRecorder recorded it: its row, and its tokens and cost
   * on its key's counters.
   */
  async storeSessionCall(call: NewModelCall): Promise<void> {
    await this.usage.write(this.spent(call));
  }

  /**
   * A call's usage row with the counters it moves, for the journal entry of what the call belongs to
   * (its step, a compaction); a run's call gives back the reservation it went out under.
   */
  spent(call: NewModelCall): SpentCall {
    const counters = this.budgets.counters(call);
    return { row: call, counters, release: counters.length > 0 && call.runId !== null ? call.runId : null };
  }

  /** Whether any limit applies to the run's calls: then each is reserved, and none is sent ahead. */
  limited(h: RunHandle): boolean {
    return (
      h.session.maxTokens !== null ||
      h.session.maxCostUsd !== null ||
      this.budgets.limitsOf({ owner: h.run.owner, endUser: h.session.endUser }).length > 0
    );
  }

  /** Whether the session's per-run limits leave the run no room for even the smallest call. */
  runSpent(h: RunHandle): boolean {
    const { session, run } = h;
    return (
      (session.maxTokens !== null &&
        session.maxTokens - run.promptTokens - run.completionTokens < MIN_CALL_TOKENS) ||
      (session.maxCostUsd !== null && (run.costUsd ?? 0) >= session.maxCostUsd)
    );
  }

  /**
   * Reserves the run's next model call, whose prompt is `promptTokens` (counted as an upper bound):
   * the output tokens it may ask for, at most LLM_MAX_OUTPUT_TOKENS and as many as every limit
   * leaves room for; or null when a limit leaves no room and none will come — the run then ends
   * over budget. While other calls' reservations in flight could leave room, it waits for them.
   * Without any limit it reserves nothing and asks for LLM_MAX_OUTPUT_TOKENS.
   */
  async reserve(h: RunHandle, promptTokens: number): Promise<number | null> {
    const maxOutput = this.config.llm.maxOutputTokens;
    const minOutput = Math.min(MIN_OUTPUT_TOKENS, maxOutput);
    const price = this.pricesOf(h.run.model);
    const promptUsd = promptTokens * price.input;
    const { session, run } = h;
    // The run's own limits: one call at a time, its usage so far on its row.
    let fits = maxOutput;
    if (session.maxTokens !== null) {
      fits = Math.min(fits, session.maxTokens - run.promptTokens - run.completionTokens - promptTokens);
    }
    const priced = price.input > 0 || price.output > 0;
    if (session.maxCostUsd !== null && priced) {
      const left = session.maxCostUsd - (run.costUsd ?? 0) - promptUsd;
      // Output without a price costs nothing: then only the prompt must fit.
      fits = price.output > 0 ? Math.min(fits, Math.floor(left / price.output)) : left < 0 ? -1 : fits;
    }
    if (fits < minOutput) return null;
    // A model without a price spends nothing against a usd limit.
    const limits = this.budgets
      .limitsOf({ owner: run.owner, endUser: session.endUser })
      .filter((l) => l.unit === 'tokens' || priced);
    if (limits.length === 0) return fits;
    for (let wait = WAIT_FIRST_MS; ; wait = Math.min(wait * 2, WAIT_MAX_MS)) {
      const reservation = await h.sink.retrying(() =>
        this.store.reserve({
          runId: run.id,
          owner: run.owner,
          limits,
          promptTokens,
          promptUsd,
          outputUsdPerToken: price.output,
          maxOutput: fits,
          minOutput,
        }),
      );
      if ('granted' in reservation) return reservation.granted;
      if (reservation.refused === 'spent') return null;
      await sleep(wait, undefined, { signal: h.signal });
    }
  }

  /**
   * Ends a run whose next call does not fit a limit, like the iteration cap: its steps and their
   * results are stored (the loop reserves between steps), so its history is well-paired and its
   * text kept; `done` says `budget_exceeded`, in the statement that sets the status.
   */
  async endOverBudget(h: RunHandle): Promise<void> {
    const { run } = h;
    const done: RunEventBody = {
      type: 'done',
      sessionId: run.sessionId,
      status: 'budget_exceeded',
      iterations: run.iterations,
      usage: runUsage(run),
      messageId: h.lastAssistantMessageId,
    };
    await h.sink.record([done], (at) =>
      this.journal.recordRun(at, {
        status: 'budget_exceeded',
        finalMessageId: h.lastAssistantMessageId,
        finished: true,
      }),
    );
  }

  /**
   * The most a prompt token and an output token of the run's model may cost — of any fallback that
   * may answer instead, too; a prompt token as the dearer of plain input and a cache write.
   */
  private pricesOf(model: string): TokenPrices {
    let known = this.prices.get(model);
    if (!known) {
      const perToken = (usage: Parameters<ModelPrices['costUsd']>[1]) =>
        Math.max(
          0,
          ...[model, ...this.config.llm.fallbackModels].map(
            (m) => (this.modelPrices.costUsd(fullModelName(m), usage) ?? 0) / MILLION,
          ),
        );
      known = {
        input: Math.max(
          perToken({ promptTokens: MILLION, completionTokens: 0 }),
          perToken({ promptTokens: MILLION, completionTokens: 0, cacheWriteTokens: MILLION }),
        ),
        output: perToken({ promptTokens: 0, completionTokens: MILLION }),
      };
      this.prices.set(model, known);
    }
    return known;
  }
}

const MILLION = 1_000_000;
