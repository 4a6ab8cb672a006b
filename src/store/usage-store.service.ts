import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { countersSql, releaseSql, type CounterRef } from './budget-store.service';
import { runBuilt, type Params } from './params';
import { withCtes, type SqlStatement } from './store-sql';

/** One model call's usage as its step stores it. */
export interface NewModelCall {
  id: string;
  /** Null for a call made for the session outside any run (an on-demand summary). */
  runId: string | null;
  sessionId: string;
  owner: string;
  /** The end user of its session, if it has one. */
  endUser: string | null;
  iteration: number;
  provider: string;
  /** `provider/model`: the model that answered. */
  model: string;
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  costUsd: number | null;
  /** Its tokens were estimated, in whole or part: the provider reported none or only part. */
  estimated: boolean;
}

/**
 * A model call's usage row, with the budget counters it moves (those its limits read: its key's,
 * its end user's) and the run whose reservation it replaces (null: none was made).
 */
export interface SpentCall {
  row: NewModelCall;
  counters: readonly CounterRef[];
  release: string | null;
}

/**
 * The statements that store a call's usage row and move its budget counters: its tokens and cost
 * added, the reservation it was sent under given back — in one INSERT, so a counter row changes
 * once per statement (BudgetStore).
 */
export function spentCallSql(p: Params, { row: c, counters, release }: SpentCall): string[] {
  const statements = [
    `INSERT INTO model_calls (id, run_id, session_id, owner, end_user, iteration, provider, model, prompt_tokens,
                              completion_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd,
                              estimated)
     VALUES (${p.add(c.id)}::uuid, ${p.add(c.runId)}::uuid, ${p.add(c.sessionId)}::uuid, ${p.add(c.owner)},
             ${p.add(c.endUser)}, ${p.add(c.iteration)}::int, ${p.add(c.provider)}, ${p.add(c.model)},
             ${p.add(c.promptTokens)}::int, ${p.add(c.completionTokens)}::int, ${p.add(c.cacheReadTokens)}::int,
             ${p.add(c.cacheWriteTokens)}::int, ${p.add(c.reasoningTokens)}::int, ${p.add(c.costUsd)}::float8,
             ${p.add(c.estimated)}::boolean)`,
  ];
  const moved = countersSql(
    p,
    { counters, tokens: c.promptTokens + c.completionTokens, costUsd: c.costUsd ?? 0 },
    release,
  );
  if (moved !== null) statements.push(moved);
  if (release !== null) statements.push(releaseSql(p, release));
  return statements;
}

/** The statements that give back what a run holds reserved, when no call's usage is stored with it. */
export function releaseRunSql(p: Params, runId: string): string[] {
  const moved = countersSql(p, { counters: [], tokens: 0, costUsd: 0 }, runId);
  return moved === null ? [] : [moved, releaseSql(p, runId)];
}

export type UsageGrouping = 'day' | 'model' | 'session' | 'key' | 'endUser';

export interface UsageQuery {
  /** Only this key's calls; null: every key's (an admin). */
  owner: string | null;
  /** Only the calls of this end user's sessions; null: with and without an end user. */
  endUser: string | null;
  from: Date;
  to: Date;
  groupBy: UsageGrouping;
}

export interface UsageRow {
  /** The group: a UTC day (YYYY-MM-DD), a model, a session id, a key name or an end user (null: none). */
  group: string | null;
  runs: number;
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  costUsd: number | null;
}

/** The expression each grouping groups by (a fixed set: never text from a request). */
const GROUP_EXPRESSIONS: Readonly<Record<UsageGrouping, string>> = {
  day: `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  model: 'model',
  session: 'session_id::text',
  key: 'owner',
  endUser: 'end_user',
};

/**
 * Model calls' usage and cost, and the per-key window counters the budgets read. The writes are
 * statements for the step's own statement (RunStore.writeWithEvents), so usage is stored exactly
 * when its step is, never after what a stream said.
 */
@Injectable()
export class UsageStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Stores a model call's usage on its own, in one statement: a call outside any run (an on-demand summary). */
  async write(spent: SpentCall): Promise<void> {
    await runBuilt(this.db.manager, (p) => withCtes(spentCallSql(p, spent), 'SELECT 1'));
  }

  /** Usage over [from, to), grouped; one key's (a range scan of ix_model_calls_owner_created) or every key's. */
  async usage(query: UsageQuery): Promise<UsageRow[]> {
    const { sql, params } = this.usageSql(query);
    const rows: (Omit<UsageRow, 'runs' | 'promptTokens' | 'completionTokens' | 'cacheReadTokens'> & {
      runs: string;
      promptTokens: string;
      completionTokens: string;
      cacheReadTokens: string;
    })[] = await this.db.query(sql, params);
    return rows.map((r) => ({
      group: r.group,
      runs: Number(r.runs),
      promptTokens: Number(r.promptTokens),
      completionTokens: Number(r.completionTokens),
      cacheReadTokens: Number(r.cacheReadTokens),
      costUsd: r.costUsd,
    }));
  }

  /** The statement of `usage` (its plan is checked against a year of calls in the tests). */
  usageSql(query: UsageQuery): SqlStatement {
    const params: unknown[] = [query.from, query.to];
    const where = ['created_at >= $1', 'created_at < $2'];
    if (query.owner !== null) where.push(`owner = $${params.push(query.owner)}`);
    if (query.endUser !== null) where.push(`end_user = $${params.push(query.endUser)}`);
    return {
      sql: `SELECT ${GROUP_EXPRESSIONS[query.groupBy]} AS "group", count(DISTINCT run_id) AS runs,
                   sum(prompt_tokens) AS "promptTokens", sum(completion_tokens) AS "completionTokens",
                   sum(cache_read_tokens) AS "cacheReadTokens", sum(cost_usd::numeric)::float8 AS "costUsd"
              FROM model_calls
             WHERE ${where.join(' AND ')}
             GROUP BY 1 ORDER BY 1`,
      params,
    };
  }
}
