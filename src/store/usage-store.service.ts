import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { BudgetWindow } from '../config/team-config';
import { runBuilt, type Params } from './params';
import { withCtes, type Queryable, type SqlStatement } from './store-sql';

/** One model call's usage as its step stores it. */
export interface NewModelCall {
  id: string;
  /** Null for a call made for the session outside any run (an on-demand summary). */
  runId: string | null;
  sessionId: string;
  owner: string;
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

/** A model call's usage row, with the windows of its key's spend it moves (those its limits read). */
export interface SpentCall {
  row: NewModelCall;
  windows: readonly BudgetWindow[];
}

/** The statements that store a call's usage row and add its tokens and cost to its key's windows. */
export function spentCallSql(p: Params, { row: c, windows }: SpentCall): string[] {
  const statements = [
    `INSERT INTO model_calls (id, run_id, session_id, owner, iteration, provider, model, prompt_tokens,
                              completion_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd,
                              estimated)
     VALUES (${p.add(c.id)}::uuid, ${p.add(c.runId)}::uuid, ${p.add(c.sessionId)}::uuid, ${p.add(c.owner)},
             ${p.add(c.iteration)}::int, ${p.add(c.provider)}, ${p.add(c.model)}, ${p.add(c.promptTokens)}::int,
             ${p.add(c.completionTokens)}::int, ${p.add(c.cacheReadTokens)}::int, ${p.add(c.cacheWriteTokens)}::int,
             ${p.add(c.reasoningTokens)}::int, ${p.add(c.costUsd)}::float8, ${p.add(c.estimated)}::boolean)`,
  ];
  // Windows in a fixed order, so concurrent steps of one key lock the rows in the same order; each
  // by the database's clock (UTC), as UsageStore.spend reads them.
  if (windows.length > 0) {
    statements.push(
      `INSERT INTO key_spend (owner, window_kind, window_start, tokens, cost_usd)
       SELECT ${p.add(c.owner)}, w, date_trunc(w, now(), 'UTC'), ${p.add(c.promptTokens + c.completionTokens)}::bigint,
              ${p.add(c.costUsd ?? 0)}::float8
         FROM unnest(${p.add([...windows].sort())}::text[]) AS w
       ON CONFLICT (owner, window_kind, window_start)
       DO UPDATE SET tokens = key_spend.tokens + excluded.tokens,
                     cost_usd = (key_spend.cost_usd::numeric + excluded.cost_usd::numeric)::float8`,
    );
  }
  return statements;
}

/** A key's spend in one window. */
export interface WindowSpend {
  tokens: number;
  costUsd: number;
}

export type UsageGrouping = 'day' | 'model' | 'session' | 'key';

export interface UsageQuery {
  /** Only this key's calls; null: every key's (an admin). */
  owner: string | null;
  from: Date;
  to: Date;
  groupBy: UsageGrouping;
}

export interface UsageRow {
  /** The group: a UTC day (YYYY-MM-DD), a model, a session id or a key name. */
  group: string;
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

  /** What the key has spent in the current window of each of `windows` (committed steps only). */
  async spend(
    owner: string,
    windows: readonly BudgetWindow[],
    q: Queryable = this.db.manager,
  ): Promise<Map<BudgetWindow, WindowSpend>> {
    const rows: { window: BudgetWindow; tokens: string; costUsd: number }[] = await q.query(
      `SELECT window_kind AS "window", tokens, cost_usd AS "costUsd" FROM key_spend
        WHERE owner = $1 AND window_kind = ANY($2::text[]) AND window_start = date_trunc(window_kind, now(), 'UTC')`,
      [owner, windows],
    );
    return new Map(rows.map((r) => [r.window, { tokens: Number(r.tokens), costUsd: r.costUsd }]));
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
    if (query.owner !== null) params.push(query.owner);
    return {
      sql: `SELECT ${GROUP_EXPRESSIONS[query.groupBy]} AS "group", count(DISTINCT run_id) AS runs,
                   sum(prompt_tokens) AS "promptTokens", sum(completion_tokens) AS "completionTokens",
                   sum(cache_read_tokens) AS "cacheReadTokens", sum(cost_usd::numeric)::float8 AS "costUsd"
              FROM model_calls
             WHERE created_at >= $1 AND created_at < $2 ${query.owner === null ? '' : 'AND owner = $3'}
             GROUP BY 1 ORDER BY 1`,
      params,
    };
  }
}
