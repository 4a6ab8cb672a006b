import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { DomainError, ErrorCode } from '../common/domain-error';
import { limitsOf, type Budgets } from '../config/team-config';
import { BudgetStore, type LimitStanding } from '../store/budget-store.service';
import { UsageStore, type UsageGrouping, type UsageRow } from '../store/usage-store.service';

const DEFAULT_SPAN_MS = 30 * 24 * 3600 * 1000;

/** GET /v1/usage: a key's own usage, or every key's for an ADMIN_KEYS key. */
@Injectable()
export class UsageReports {
  private readonly adminKeys: ReadonlySet<string>;
  private readonly budgets: Budgets;

  constructor(
    private readonly usage: UsageStore,
    private readonly budgetStore: BudgetStore,
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'adminKeys' | 'budgets'>,
  ) {
    this.adminKeys = config.adminKeys;
    this.budgets = config.budgets;
  }

  /**
   * The use of `owner`'s key (every key's for an admin) — only `endUser`'s with X-End-User, where
   * the query naming another end user answers nothing —, and each limit that applies to the caller.
   */
  async report(
    owner: string,
    endUser: string | null,
    q: { from?: string; to?: string; groupBy?: UsageGrouping; endUser?: string },
  ): Promise<{ grouping: UsageGrouping; rows: UsageRow[]; limits: LimitStanding[] }> {
    const admin = this.adminKeys.has(owner);
    const grouping = q.groupBy ?? 'day';
    if (grouping === 'key' && !admin) {
      throw new DomainError(ErrorCode.InvalidRequest, 'groupBy=key is only for ADMIN_KEYS keys');
    }
    const to = q.to === undefined ? new Date() : new Date(q.to);
    const from = q.from === undefined ? new Date(to.getTime() - DEFAULT_SPAN_MS) : new Date(q.from);
    if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()) || from > to) {
      throw new DomainError(ErrorCode.InvalidRequest, 'from must be an ISO 8601 time no later than to');
    }
    const limits = await this.budgetStore.standings(limitsOf(this.budgets, owner, endUser));
    if (endUser !== null && q.endUser !== undefined && q.endUser !== endUser) {
      return { grouping, rows: [], limits };
    }
    const rows = await this.usage.usage({
      owner: admin ? null : owner,
      endUser: endUser ?? q.endUser ?? null,
      from,
      to,
      groupBy: grouping,
    });
    return { grouping, rows, limits };
  }
}
