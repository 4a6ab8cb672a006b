import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { DomainError, ErrorCode } from '../common/domain-error';
import { UsageStore, type UsageGrouping, type UsageRow } from '../store/usage-store.service';

const DEFAULT_SPAN_MS = 30 * 24 * 3600 * 1000;

/** GET /v1/usage: a key's own usage, or every key's for an ADMIN_KEYS key. */
@Injectable()
export class UsageReports {
  private readonly adminKeys: ReadonlySet<string>;

  constructor(
    private readonly usage: UsageStore,
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'adminKeys'>,
  ) {
    this.adminKeys = config.adminKeys;
  }

  async report(
    owner: string,
    q: { from?: string; to?: string; groupBy?: UsageGrouping },
  ): Promise<{ grouping: UsageGrouping; rows: UsageRow[] }> {
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
    const rows = await this.usage.usage({ owner: admin ? null : owner, from, to, groupBy: grouping });
    return { grouping, rows };
  }
}
