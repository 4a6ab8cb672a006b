import type { UsageGrouping, UsageRow } from '../store/usage-store.service';
import type { UsageEntryResponse } from './dto/usage.response';

/** A usage entry's JSON shape in the contract, keyed by its grouping. */
const USAGE_GROUP_FIELDS = {
  day: 'day',
  model: 'model',
  session: 'sessionId',
  key: 'key',
  endUser: 'endUser',
} as const;

export function usageView(grouping: UsageGrouping, r: UsageRow): UsageEntryResponse {
  return {
    [USAGE_GROUP_FIELDS[grouping]]: r.group,
    runs: r.runs,
    promptTokens: r.promptTokens,
    completionTokens: r.completionTokens,
    cacheReadTokens: r.cacheReadTokens,
    costUsd: r.costUsd,
  };
}
