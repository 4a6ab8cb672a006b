import type { ResponseFormat } from '../common/response-format';
import type { RunError, RunReplay, RunStatus } from '../persistence/entities/run.entity';
import type { Params } from './params';

/**
 * A run's row both ways: the columns a read selects, named as RunRow's fields, and the SET
 * assignments a write makes from RunChanges. One place, so a new column is added once for every
 * statement that reads or changes a run.
 */

export interface RunRow {
  id: string;
  sessionId: string;
  owner: string;
  /** The end user of its session (null: none); whose budget it spends besides its key's. */
  endUser: string | null;
  status: RunStatus;
  model: string;
  maxIterations: number;
  iterations: number;
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** Some of its usage was estimated (a call the provider did not report in full). */
  usageEstimated: boolean;
  /** USD of the run's priced model calls; null while none had a price. */
  costUsd: number | null;
  /**
   * The `traceparent` of the span the run's later stretches continue under — its first, or the one
   * of the stretch that took it over (RunTracing.startRun) — for whoever drives it next; null without tracing.
   */
  traceParent: string | null;
  error: RunError | null;
  /** A replayed run's record: which run, how many steps (null: not a replay). */
  replay: RunReplay | null;
  lastSeq: number;
  finalMessageId: string | null;
  leaseOwner: string | null;
  leaseExpired: boolean;
  cancelRequested: boolean;
  /** What the final answer must be (the prompt's, else the session's); null: free text. */
  responseFormat: ResponseFormat | null;
  /** Answers sent back to the model because they did not match `responseFormat` (at most one). */
  outputCorrections: number;
  createdAt: Date;
  finishedAt: Date | null;
}

/** A run's changes, as the loop and the decisions make them. */
export type RunChanges = Partial<{
  status: RunStatus;
  iterations: number;
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  usageEstimated: boolean;
  costUsd: number | null;
  error: RunError | null;
  finalMessageId: string | null;
  leaseOwner: string | null;
  traceParent: string | null;
  outputCorrections: number;
  finished: boolean;
}>;

export const RUN_COLUMNS = `id, session_id AS "sessionId", owner,
  (SELECT s.end_user FROM sessions s WHERE s.id = runs.session_id) AS "endUser", status, model, max_iterations AS "maxIterations",
  iterations, prompt_tokens AS "promptTokens", completion_tokens AS "completionTokens",
  cache_read_tokens AS "cacheReadTokens", cache_write_tokens AS "cacheWriteTokens",
  reasoning_tokens AS "reasoningTokens", usage_estimated AS "usageEstimated",
  cost_usd AS "costUsd", trace_parent AS "traceParent", error, replay,
  last_seq AS "lastSeq", final_message_id AS "finalMessageId", lease_owner AS "leaseOwner",
  (lease_expires_at IS NULL OR lease_expires_at < now()) AS "leaseExpired",
  cancel_requested AS "cancelRequested", response_format AS "responseFormat",
  output_corrections AS "outputCorrections", created_at AS "createdAt", finished_at AS "finishedAt"`;

/**
 * SET assignments for `fields`, their values appended to `params`. A lease given to a process
 * lasts `leaseMs` from now; a finished run has no lease.
 */
export function runSets(fields: RunChanges, p: Params, leaseMs: number): string[] {
  const sets: string[] = ['updated_at = now()'];
  const set = (column: string, value: unknown) => sets.push(`${column} = ${p.add(value)}`);
  if (fields.status !== undefined) set('status', fields.status);
  if (fields.iterations !== undefined) set('iterations', fields.iterations);
  if (fields.promptTokens !== undefined) set('prompt_tokens', fields.promptTokens);
  if (fields.completionTokens !== undefined) set('completion_tokens', fields.completionTokens);
  if (fields.cacheReadTokens !== undefined) set('cache_read_tokens', fields.cacheReadTokens);
  if (fields.cacheWriteTokens !== undefined) set('cache_write_tokens', fields.cacheWriteTokens);
  if (fields.reasoningTokens !== undefined) set('reasoning_tokens', fields.reasoningTokens);
  if (fields.usageEstimated !== undefined) set('usage_estimated', fields.usageEstimated);
  if (fields.costUsd !== undefined) set('cost_usd', fields.costUsd);
  if (fields.error !== undefined) set('error', fields.error === null ? null : JSON.stringify(fields.error));
  if (fields.finalMessageId !== undefined) set('final_message_id', fields.finalMessageId);
  if (fields.traceParent !== undefined) set('trace_parent', fields.traceParent);
  if (fields.outputCorrections !== undefined) set('output_corrections', fields.outputCorrections);
  if (fields.leaseOwner !== undefined) {
    set('lease_owner', fields.leaseOwner);
    sets.push(
      fields.leaseOwner === null
        ? 'lease_expires_at = NULL'
        : `lease_expires_at = now() + ${leaseMs} * interval '1 millisecond'`,
    );
  }
  if (fields.finished) sets.push('finished_at = now()', 'lease_owner = NULL', 'lease_expires_at = NULL');
  return sets;
}
