import type { RunStatus } from '../persistence/entities/run.entity';
import type { Params } from './params';
import type { RunChanges } from './run-row.mapper';

/** The events a webhook may ask for ("Schedules and webhooks"), or `*` for all of them. */
export const WEBHOOK_EVENT_TYPES = [
  'run.completed',
  'run.failed',
  'run.cancelled',
  'run.requires_action',
  'run.budget_exceeded',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Where an outbox insert says deliveries are due (each process's WebhookDeliverer listens). */
export const WEBHOOK_DUE_CHANNEL = 'lw_webhooks_due';

/** The event a run's new status is, for the statuses a webhook is told of. */
const EVENT_OF_STATUS: Partial<Record<RunStatus, WebhookEventType>> = {
  completed: 'run.completed',
  max_iterations: 'run.completed',
  failed: 'run.failed',
  cancelled: 'run.cancelled',
  requires_action: 'run.requires_action',
  budget_exceeded: 'run.budget_exceeded',
};

/** The webhook event a change of a run makes, or null (most changes make none). */
export function webhookEventOf(run: RunChanges): WebhookEventType | null {
  return run.status === undefined ? null : (EVENT_OF_STATUS[run.status] ?? null);
}

/**
 * The outbox write of a run's change to a status webhooks are told of: one row per webhook of the
 * run's key that asked for the event, in the statement that stores the status — so the event is
 * owed exactly when the state is stored. The body's data is the run as the statement leaves it:
 * what the change sets, else the row as it was. For a key with no webhooks this is an index probe
 * that inserts nothing and notifies no one.
 */
export function webhookOutboxSql(p: Params, runId: string, run: RunChanges, type: WebhookEventType): string {
  const now = (value: unknown, cast: string, column: string): string =>
    value === undefined ? `r.${column}` : `${p.add(value)}::${cast}`;
  const error =
    run.error === undefined ? 'r.error' : `${p.add(run.error && JSON.stringify(run.error))}::jsonb`;
  const t = p.add(type);
  return `INSERT INTO webhook_deliveries (id, webhook_id, run_id, type, data)
    SELECT gen_random_uuid(), w.id, r.id, ${t}::text,
           jsonb_build_object(
             'runId', r.id, 'sessionId', r.session_id, 'status', ${p.add(run.status)}::text,
             'usage', jsonb_build_object(
               'promptTokens', ${now(run.promptTokens, 'int', 'prompt_tokens')},
               'completionTokens', ${now(run.completionTokens, 'int', 'completion_tokens')},
               'cacheReadTokens', ${now(run.cacheReadTokens, 'int', 'cache_read_tokens')},
               'cacheWriteTokens', ${now(run.cacheWriteTokens, 'int', 'cache_write_tokens')},
               'reasoningTokens', ${now(run.reasoningTokens, 'int', 'reasoning_tokens')},
               'costUsd', ${now(run.costUsd, 'float8', 'cost_usd')}),
             'error', ${error})
      FROM runs r JOIN webhooks w ON w.owner = r.owner
     WHERE r.id = ${p.add(runId)}::uuid AND w.events && ARRAY[${t}, '*']::text[]
    RETURNING pg_notify('${WEBHOOK_DUE_CHANNEL}', '')`;
}
