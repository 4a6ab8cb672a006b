import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { DomainError, ErrorCode } from '../common/domain-error';
import type { BudgetLimit, BudgetWindow, Budgets } from '../config/team-config';
import { UsageStore } from '../store/usage-store.service';
import type { RunRow } from '../store/run-store.service';
import type { SessionRow } from '../store/session-store.service';

/** The limit a model call would start over, and when it lifts (a key's window rolling over), if it does. */
export interface BudgetExceeded {
  limit: string;
  /** Seconds until the window rolls over; null for a run's own limit (it never lifts). */
  retryAfterSeconds: number | null;
}

/**
 * The limits checked before every model call: the key's BUDGETS windows, and the session's
 * `maxTokens` / `maxCostUsd` for each run.
 *
 * Why a key's limit is passed by at most the cost of the calls in flight when it was reached, and
 * never by a call that started after, however many runs of the key race:
 * 1. Every model call's tokens and cost are added to the key's window counters (`key_spend`) by the
 *    very statement that stores its step (RunOrchestrator.commitStep): a call is counted exactly when
 *    it is committed, atomically (`tokens = tokens + …` under the row's lock, never a lost update).
 * 2. A call starts only after `exceeded` read those counters and found room, in a statement that
 *    began after the run's previous step had committed (the loop sends no call ahead of its step's
 *    commit while a limit applies, and a run's first call goes out after the start's check). So a
 *    check sees every call committed before it began — its own run's included.
 * 3. The limit is reached at the commit that brings a counter to it. Any check that begins after
 *    that commit reads the counter at or over the limit and the run makes no call. The calls that
 *    can still add to the counter are therefore exactly those whose checks passed before that
 *    commit and that had not committed yet: the calls in flight then, at most one per run. Their
 *    cost is the only overshoot.
 * A run's own limits need no database: one run makes one call at a time, and its usage so far is
 * on its row (moved by the same statements).
 */
@Injectable()
export class BudgetGuard {
  private readonly budgets: Budgets;

  constructor(
    private readonly usage: UsageStore,
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'budgets'>,
  ) {
    this.budgets = config.budgets;
  }

  /** The BUDGETS limits of `owner`: its own entry, else `*`'s. */
  keyLimits(owner: string): readonly BudgetLimit[] {
    return this.budgets.byKey.get(owner) ?? this.budgets.fallback;
  }

  /** The windows whose counters a call of `owner` moves (those its limits read). */
  windows(owner: string): BudgetWindow[] {
    return [...new Set(this.keyLimits(owner).map((l) => l.window))];
  }

  /** Whether any limit applies to runs of this session and key: then every call waits for a check. */
  applies(owner: string, session: Pick<SessionRow, 'maxTokens' | 'maxCostUsd'>): boolean {
    return this.keyLimits(owner).length > 0 || session.maxTokens !== null || session.maxCostUsd !== null;
  }

  /** The first limit the run's next model call would start over, or null when every limit has room. */
  async exceeded(
    run: Pick<RunRow, 'owner' | 'promptTokens' | 'completionTokens' | 'costUsd'>,
    session: Pick<SessionRow, 'maxTokens' | 'maxCostUsd'>,
  ): Promise<BudgetExceeded | null> {
    if (session.maxTokens !== null && run.promptTokens + run.completionTokens >= session.maxTokens) {
      return { limit: `the session's maxTokens (${session.maxTokens})`, retryAfterSeconds: null };
    }
    if (session.maxCostUsd !== null && (run.costUsd ?? 0) >= session.maxCostUsd) {
      return { limit: `the session's maxCostUsd (${session.maxCostUsd})`, retryAfterSeconds: null };
    }
    return this.keyExceeded(run.owner);
  }

  /** The first of the key's window limits already spent, or null. */
  async keyExceeded(owner: string, now = new Date()): Promise<BudgetExceeded | null> {
    const limits = this.keyLimits(owner);
    if (limits.length === 0) return null;
    const spent = await this.usage.spend(owner, this.windows(owner));
    for (const l of limits) {
      const s = spent.get(l.window);
      const used = l.unit === 'usd' ? (s?.costUsd ?? 0) : (s?.tokens ?? 0);
      if (used >= l.amount) {
        return {
          limit: `${l.amount} ${l.unit} per ${l.window} (BUDGETS)`,
          retryAfterSeconds: secondsUntilRollover(l.window, now),
        };
      }
    }
    return null;
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
    over.retryAfterSeconds ?? undefined,
  );
}
