import { Inject, Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import type { RunEventBody } from '../events/run-events';
import { askOf, pricedLimits, ReservationPrices } from './reservation-prices.service';
import {
  BudgetStore,
  runCounter,
  type LimitedRun,
  type ReservationAsk,
  type ReservedLimit,
} from '../store/budget-store.service';
import { RunJournal } from '../store/run-journal.service';
import { UsageStore, type NewModelCall, type SpentCall } from '../store/usage-store.service';
import { BudgetGuard, budgetExceeded, MIN_OUTPUT_TOKENS, type Spender } from './budget-guard.service';
import type { RunHandle } from './run-handle';
import { runUsage } from './step-record';

/** How long a run whose call does not fit waits between two tries while other calls are in flight. */
const WAIT_FIRST_MS = 20;
const WAIT_MAX_MS = 500;

/**
 * The next call of a run reserved ahead, while the step's calls run, once the step is stored
 * (reserveAhead): for a prompt of at most `promptTokens`, with `granted` output tokens — or none
 * (null) when it did not fit then, or the statement failed.
 */
export interface ReservedAhead {
  promptTokens: number;
  granted: number | null;
}

/** The next model call of a run does not fit a limit, and no call in flight will leave room: the run ends `budget_exceeded`. */
export class BudgetSpent extends Error {
  constructor() {
    super('The next model call does not fit a limit of the run.');
    this.name = 'BudgetSpent';
  }
}

/**
 * A run's spending, at the loop's few points: before each model call — a step's or a summary's —
 * the reservation that lets it go out (`reserve`: on the budget counters of every limit that applies,
 * the key's and its end user's (BudgetGuard), the run's own and those of the runs above it, all in
 * one statement); a model call's usage row (ModelCallRecorder's, in the journal entry of its step)
 * with the counters it moves and the reservation it gives back.
 */
@Injectable()
export class RunAccounting {
  /** Each run's limits (limitsOf), read once per handle. */
  private readonly runLimits = new WeakMap<RunHandle, Promise<ReservedLimit[]>>();

  constructor(
    private readonly usage: UsageStore,
    private readonly budgets: BudgetGuard,
    private readonly store: BudgetStore,
    private readonly journal: RunJournal,
    private readonly prices: ReservationPrices,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'llm'>,
  ) {}

  /**
   * Stores a model call made for a session outside any run (the summary of `POST
   * /v1/sessions/:id/compact`), as ModelCallRecorder recorded it: its row, and its tokens and cost
   * on its key's counters, giving back what `holder` reserved for it (reserveSessionCall).
   */
  async storeSessionCall(call: NewModelCall, holder: string): Promise<void> {
    await this.usage.write(this.spent(call, holder));
  }

  /**
   * A call's usage row with the key's counters it moves, for the journal entry of what the call
   * belongs to; it gives back the reservation `heldBy` holds (a run's by default) when a limit of the
   * key applies. A run's call under a limit of the run's own: `spentIn`.
   */
  spent(call: NewModelCall, heldBy: string | null = call.runId): SpentCall {
    const counters = this.budgets.counters(call);
    return { row: call, counters, release: counters.length > 0 ? heldBy : null };
  }

  /**
   * A call of the run `h` (a step's, a summary's) as its statement stores it: it gives back the
   * reservation it went out under whenever any limit applies to the run — the run counters it
   * reserved on are moved by that release (countersSql). `keep`: the run's next call is being
   * reserved ahead (reserveAhead), which gives back what the run holds itself: this statement gives
   * back nothing, and adds the call to the run counters by name.
   */
  async spentIn(h: RunHandle, call: NewModelCall, keep = false): Promise<SpentCall> {
    const limits = await this.limitsOf(h);
    if (limits.length === 0) return { ...this.spent(call), release: null };
    if (!keep) return { ...this.spent(call), release: h.run.id };
    const spent = this.spent(call, null);
    // The run counters a reservation of the run is made on (`reserve`): those the release would move.
    const runCounters = pricedLimits(limits, this.prices.of(h.run.model))
      .filter((l) => l.window === 'run')
      .map(({ counter, window }) => ({ counter, window }));
    return { ...spent, counters: [...spent.counters, ...runCounters], release: null };
  }

  /**
   * Reserves the run's next call ahead, in place of what the run holds (one statement:
   * BudgetStore.reserve `replacing`), while the step before it is stored — whose statement keeps the
   * run's reservation for this (spentIn `keep`). One try, no wait: a call that does not fit now, or a
   * statement that failed, is reserved by the loop as usual (`reserve`), after giving back what the
   * run may still hold.
   */
  async reserveAhead(h: RunHandle, promptTokens: number): Promise<ReservedAhead> {
    const maxOutput = this.config.llm.maxOutputTokens;
    const price = this.prices.of(h.run.model);
    const limits = pricedLimits(await this.limitsOf(h), price);
    if (limits.length === 0) return { promptTokens, granted: maxOutput };
    const ask = askOf(price, promptTokens, maxOutput, Math.min(MIN_OUTPUT_TOKENS, maxOutput));
    try {
      const reservation = await this.store.reserve(
        { runId: h.run.id, owner: h.run.owner, limits, ...ask },
        true,
      );
      return { promptTokens, granted: 'granted' in reservation ? reservation.granted : null };
    } catch {
      return { promptTokens, granted: null };
    }
  }

  /** Whether any limit applies to the run's calls: then each is reserved, and none is sent ahead. */
  async limited(h: RunHandle): Promise<boolean> {
    return (await this.limitsOf(h)).length > 0;
  }

  /**
   * Reserves the run's next model call, whose prompt is `promptTokens` (counted as an upper bound):
   * the output tokens it may ask for — at most `output.max` (LLM_MAX_OUTPUT_TOKENS), at least
   * `output.min` — as many as every limit leaves room for. While other calls' reservations in flight
   * could leave room, it waits for them; when none will come it throws BudgetSpent (the run ends
   * over budget). Without any limit it reserves nothing and grants `output.max`.
   */
  async reserve(
    h: RunHandle,
    promptTokens: number,
    output: { max?: number; min?: number } = {},
  ): Promise<number> {
    const maxOutput = output.max ?? this.config.llm.maxOutputTokens;
    const minOutput = output.min ?? Math.min(MIN_OUTPUT_TOKENS, maxOutput);
    const price = this.prices.of(h.run.model);
    const limits = pricedLimits(await this.limitsOf(h), price);
    if (limits.length === 0) return maxOutput;
    const granted = await this.reserveWaiting(
      {
        runId: h.run.id,
        owner: h.run.owner,
        limits,
        ...askOf(price, promptTokens, maxOutput, minOutput),
      },
      h.signal,
      (work) => h.sink.retrying(work),
    );
    if (granted === null) throw new BudgetSpent();
    return granted;
  }

  /**
   * Reserves a run's first call before the run is stored, for it to go out with the start
   * (CallsAhead), on the key's and its end user's limits (a run whose session has limits of its own
   * reserves in its loop): one try, no wait — the output tokens granted, or null when the call does
   * not fit now (the loop then reserves, and waits while calls in flight may leave room). Undefined
   * when no limit applies. Held by `holder`, the run's id: the run's first step gives it back; when
   * the run is not stored after all, the statement that counts its stopped call (CallsAhead).
   */
  async reserveFirst(
    holder: string,
    spender: Spender,
    model: string,
    promptTokens: number,
  ): Promise<number | null | undefined> {
    if (!this.keyLimited(spender)) return undefined;
    const price = this.prices.of(model);
    const maxOutput = this.config.llm.maxOutputTokens;
    const minOutput = Math.min(MIN_OUTPUT_TOKENS, maxOutput);
    // As `reserve`: a usd limit spends nothing of a model without a price, so nothing is reserved.
    const limits = pricedLimits(this.budgets.limitsOf(spender), price);
    if (limits.length === 0) return maxOutput;
    const reservation = await this.store.reserve({
      runId: holder,
      owner: spender.owner,
      limits,
      ...askOf(price, promptTokens, maxOutput, minOutput),
    });
    return 'granted' in reservation ? reservation.granted : null;
  }

  /**
   * Whether the key or its end user has limits (BUDGETS): then a call of theirs is reserved — as
   * `limited` says of a run whose session has none of its own.
   */
  keyLimited(spender: Spender): boolean {
    return this.budgets.limitsOf(spender).length > 0;
  }

  /** Gives back what `holder` holds reserved (a start's first call that was never sent): one statement. */
  async release(holder: string): Promise<void> {
    await this.store.release(holder);
  }

  /** Gives back what the run holds reserved, for a call that was not sent after all (one statement, only under a limit). */
  async giveBack(h: RunHandle): Promise<void> {
    if (await this.limited(h)) await h.sink.retrying(() => this.store.release(h.run.id));
  }

  /**
   * Reserves a call made for a session outside any run (an on-demand summary): its prompt and all of
   * its `maxTokens` on the key's and its end user's limits, held by `holder` until the statement that
   * stores the call (storeSessionCall) or BudgetStore.release gives it back. False when no limit
   * applies (nothing reserved); a call that does not fit is the 429 a start gets.
   */
  async reserveSessionCall(
    holder: string,
    spender: Spender,
    model: string,
    promptTokens: number,
    maxTokens: number,
  ): Promise<boolean> {
    const price = this.prices.of(model);
    const limits = pricedLimits(this.budgets.limitsOf(spender), price);
    if (limits.length === 0) return false;
    const ask = askOf(price, promptTokens, maxTokens, maxTokens);
    const granted = await this.reserveWaiting({ runId: holder, owner: spender.owner, limits, ...ask });
    if (granted === null) throw budgetExceeded(await this.budgets.refusal(spender));
    return true;
  }

  /**
   * The limits on a call of the run: the key's and its end user's (BUDGETS), its session's
   * `maxTokens` / `maxCostUsd` on the run's own counter, and those of every run above it (a child's
   * usage counts against its root session's limits: "Agents and delegation") — read once per handle,
   * and only for a child run.
   */
  private limitsOf(h: RunHandle): Promise<ReservedLimit[]> {
    let known = this.runLimits.get(h);
    if (!known) {
      const own: LimitedRun = {
        runId: h.run.id,
        maxTokens: h.session.maxTokens,
        maxCostUsd: h.session.maxCostUsd,
      };
      const parent = h.session.parentRunId;
      known = (parent === null ? Promise.resolve([]) : this.store.limitedAncestors(parent)).then((above) => [
        ...this.budgets.limitsOf({ owner: h.run.owner, endUser: h.session.endUser }),
        ...[own, ...above].flatMap(runLimits),
      ]);
      // A failed read is read again next time.
      known.catch(() => this.runLimits.delete(h));
      this.runLimits.set(h, known);
    }
    return known;
  }

  /**
   * One reservation, tried again while the reservations in flight could leave room (20 ms doubling
   * to 500 ms, aborted by `signal`): the output tokens granted, or null when none will come.
   */
  private async reserveWaiting(
    ask: ReservationAsk,
    signal?: AbortSignal,
    retrying: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
  ): Promise<number | null> {
    for (let wait = WAIT_FIRST_MS; ; wait = Math.min(wait * 2, WAIT_MAX_MS)) {
      const reservation = await retrying(() => this.store.reserve(ask));
      if ('granted' in reservation) return reservation.granted;
      if (reservation.refused === 'spent') return null;
      await sleep(wait, undefined, { signal });
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
}

/** A limited run's limits on its own counter (none when its session has none). */
function runLimits(r: LimitedRun): ReservedLimit[] {
  const counter = runCounter(r.runId);
  return [
    ...(r.maxTokens === null
      ? []
      : [{ counter, window: 'run' as const, unit: 'tokens' as const, amount: r.maxTokens }]),
    ...(r.maxCostUsd === null
      ? []
      : [{ counter, window: 'run' as const, unit: 'usd' as const, amount: r.maxCostUsd }]),
  ];
}
