import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { DomainError, ErrorCode } from '../common/domain-error';
import {
  limitName,
  limitsOf,
  type BudgetWindow,
  type Budgets,
  type CounterLimit,
} from '../config/team-config';
import { BudgetStore, standing, type CounterRef } from '../store/budget-store.service';
import { REQUEST_TOKENS } from './token-count';

/**
 * The fewest output tokens a call is sent with: a call that could not write this much is not worth
 * its prompt, so when a limit leaves less the run ends (`budget_exceeded`) instead.
 */
export const MIN_OUTPUT_TOKENS = 16;

/** The smallest call there is: an empty request's tokens and the fewest output a call is sent with. */
export const MIN_CALL_TOKENS = REQUEST_TOKENS + MIN_OUTPUT_TOKENS;

/** The limit a start would begin over, and when it lifts (its window rolling over). */
export interface BudgetExceeded {
  limit: string;
  /** Seconds until the window rolls over. */
  retryAfterSeconds: number;
}

/** Whose limits apply: a key, and the end user its session belongs to (null: none). */
export interface Spender {
  owner: string;
  endUser: string | null;
}

/**
 * The BUDGETS limits of a key and of its end users (team-config's limitsOf), and their counters
 * (`key_spend`).
 *
 * Why a limit is never passed, however many runs race on however many processes: before a model
 * call is sent, its prompt (counted as an upper bound) and as much output as it may produce are
 * reserved on every counter that limits it, by one statement that locks those rows in a fixed order
 * and adds to all or none (BudgetStore.reserve) only while used + reserved + the call ≤ the limit;
 * the call asks the model for no more output than was reserved (RunAccounting.reserve). When it
 * ends, the statement that stores its usage gives the reservation back (RunJournal), so used +
 * reserved only ever holds what committed calls used plus the most the calls in flight may use.
 */
@Injectable()
export class BudgetGuard {
  private readonly budgets: Budgets;

  constructor(
    private readonly store: BudgetStore,
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'budgets'>,
  ) {
    this.budgets = config.budgets;
  }

  /** The limits on a call of `s`, each on its counter: the key's, then its end user's. */
  limitsOf(s: Spender): CounterLimit[] {
    return limitsOf(this.budgets, s.owner, s.endUser);
  }

  /** The counters a call of `s` moves (those its limits read); none when no limit applies. */
  counters(s: Spender): CounterRef[] {
    return this.limitsOf(s).map(({ counter, window }) => ({ counter, window }));
  }

  /**
   * The first limit of `s` whose counter has no room left for any call in the current window (what
   * is used leaves less than the smallest call's tokens, or nothing of a usd limit), or null.
   */
  async spent(s: Spender, now = new Date()): Promise<BudgetExceeded | null> {
    const limits = this.limitsOf(s);
    if (limits.length === 0) return null;
    const states = await this.store.counters(limits);
    for (const l of limits) {
      const { used } = standing(l, states);
      if (l.unit === 'usd' ? used >= l.amount : l.amount - used < MIN_CALL_TOKENS) {
        return { limit: limitName(l), retryAfterSeconds: secondsUntilRollover(l.window, now) };
      }
    }
    return null;
  }

  /**
   * The limit that refused a call of `s` (one that had room for a smallest call but not for this
   * one): the first spent limit, else the one with the least left of its amount.
   */
  async refusal(s: Spender, now = new Date()): Promise<BudgetExceeded> {
    const spent = await this.spent(s, now);
    if (spent) return spent;
    const limits = this.limitsOf(s);
    const states = await this.store.counters(limits);
    const leftOf = (l: CounterLimit) => {
      const { used, reserved } = standing(l, states);
      return (l.amount - used - reserved) / l.amount;
    };
    const tightest = limits.reduce((a, b) => (leftOf(b) < leftOf(a) ? b : a));
    return { limit: limitName(tightest), retryAfterSeconds: secondsUntilRollover(tightest.window, now) };
  }
}

/** Seconds from `now` to the start of the next UTC hour, day or month (at least 1). */
export function secondsUntilRollover(window: BudgetWindow, now: Date): number {
  const next = new Date(now.getTime());
  switch (window) {
    case 'hour':
      next.setUTCMinutes(60, 0, 0);
      break;
    case 'day':
      next.setUTCHours(24, 0, 0, 0);
      break;
    case 'month':
      next.setUTCMonth(next.getUTCMonth() + 1, 1);
      next.setUTCHours(0, 0, 0, 0);
      break;
  }
  return Math.max(1, Math.ceil((next.getTime() - now.getTime()) / 1000));
}

/** The 429 of a key whose budget in the current window is spent; it may ask again once the window rolls over. */
export function budgetExceeded(over: BudgetExceeded): DomainError {
  return new DomainError(
    ErrorCode.BudgetExceeded,
    `This key's budget is spent: ${over.limit}`,
    { code: ErrorCode.BudgetExceeded },
    over.retryAfterSeconds,
  );
}
