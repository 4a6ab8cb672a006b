import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { DomainError, ErrorCode } from '../common/domain-error';
import { Draining } from '../common/draining.service';
import { BudgetGuard, budgetExceeded, type Spender } from '../agent/budget-guard.service';
import type { SessionRow } from '../store/session-store.service';
import {
  RunStartStore,
  type KeyRunCounts,
  type RunStart,
  type StartOutcome,
} from '../store/run-start-store.service';
import { RunStore, type Queryable } from '../store/run-store.service';

/**
 * Start transactions that may be between their count of a key's runs and their commit, on every
 * replica together (each holds a pooled connection, 10 per process): up to ten replicas, a key this
 * far from its limits cannot pass them without the per-key lock.
 */
const LIMIT_MARGIN = 100;

/**
 * Whether a run may start now, and the start statement written only within the limits: the
 * server's (a 503 while draining or at MAX_ACTIVE_RUNS), the key's budget (a 429 until its window
 * rolls over) and the key's rate and active runs (a 429, counted by the statement itself). A
 * refused start stores nothing.
 */
@Injectable()
export class StartLimits {
  /** Whether a start may be admitted without the key's lock: both limits are above the margin. */
  private readonly unlockedStarts: boolean;

  constructor(
    private readonly store: RunStore,
    private readonly starts: RunStartStore,
    private readonly draining: Draining,
    private readonly budgets: BudgetGuard,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.unlockedStarts =
      config.rateLimitRunsPerMinute > LIMIT_MARGIN && config.maxActiveRunsPerKey > LIMIT_MARGIN;
  }

  /**
   * Whether a start's first model call may go out before the start is admitted (reserved first under
   * the key's limits, CallsAhead): not when this process, driving `localRuns` runs, would refuse it
   * now, nor when the session has limits of its own — their counter is the run's, which exists only
   * once the run does, so its first call waits for the loop's reservation (RunAccounting.reserve).
   */
  maySendAhead(session: Pick<SessionRow, 'maxTokens' | 'maxCostUsd'>, localRuns: number): boolean {
    return !this.refusal(localRuns) && session.maxTokens === null && session.maxCostUsd === null;
  }

  /**
   * Throws the 503 of this process (driving `localRuns` runs) or the 429 of a limit of the key (or
   * of its end user) that has no room left in its window for a call — not looked at when the first
   * call was reserved with the start (`reserved`): that showed room.
   */
  async assertMayStart(spender: Spender, localRuns: number, reserved = false): Promise<void> {
    const refusal = this.refusal(localRuns);
    if (refusal) throw refusal;
    if (reserved) return;
    const over = await this.budgets.spent(spender);
    if (over) throw budgetExceeded(over);
  }

  /**
   * The start statement, first on its own (or in the caller's transaction `tx`) with the counts that
   * take no lock: they miss only starts whose transactions have not committed — at most one per
   * pooled connection of every replica — so a key more than LIMIT_MARGIN below its limits cannot pass
   * one. Nearer, nothing was stored, and the statement runs again after the key's lock, which
   * serialises its starts up to their commit (and so their fsync). With a limit within the margin
   * (the defaults are) the statement alone could never admit a start: it takes the lock at once.
   */
  async startWithinLimits(
    start: RunStart,
    tx: Queryable | undefined,
  ): Promise<Extract<StartOutcome, { admitted: true }>> {
    if (this.unlockedStarts) {
      const first = await this.starts.start(tx ?? this.store.queryable, start, LIMIT_MARGIN);
      if (first.admitted) return first;
    }
    const exact = async (locked: Queryable) => {
      await this.starts.lockKey(locked, start.run.owner);
      return this.starts.start(locked, start, 0);
    };
    const second = tx ? await exact(tx) : await this.store.transaction(exact);
    if (!second.admitted) throw this.limitReached(second.counts);
    return second;
  }

  /** The 503 of a start now: while draining, or when this process drives as many runs as it may. */
  private refusal(localRuns: number): DomainError | null {
    if (this.draining.active)
      return new DomainError(
        ErrorCode.ShuttingDown,
        'The server is shutting down; retry on another instance',
        {},
        1,
      );
    if (localRuns >= this.config.maxActiveRuns) {
      return new DomainError(
        ErrorCode.ServerBusy,
        'The server is running as many runs as it may; retry shortly',
        {},
        1,
      );
    }
    return null;
  }

  /** The 429 of a key at one of its limits, counted exactly. */
  private limitReached(counts: KeyRunCounts): DomainError {
    if (counts.lastMinute >= this.config.rateLimitRunsPerMinute) {
      const retryAfter = Math.max(1, Math.ceil((60_000 - counts.oldestAgeMs) / 1000));
      return new DomainError(
        ErrorCode.RateLimited,
        `Rate limit: at most ${this.config.rateLimitRunsPerMinute} runs a minute per key`,
        {},
        retryAfter,
      );
    }
    return new DomainError(
      ErrorCode.TooManyActiveRuns,
      `This key already has ${counts.active} active runs (MAX_ACTIVE_RUNS_PER_KEY=${this.config.maxActiveRunsPerKey})`,
      {},
      1,
    );
  }
}
