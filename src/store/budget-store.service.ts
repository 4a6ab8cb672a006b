import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { limitName, type BudgetWindow, type CounterLimit } from '../config/team-config';
import { runBuilt, type Params } from './params';
import { ReservationBatcher } from './reservation-batcher';
import { withCtes } from './store-sql';

/**
 * A counter's window: a BUDGETS window, or `run` — a run's own limits (`maxTokens`, `maxCostUsd`), one
 * window that never rolls over (`budget_window` in SQL, migration 1797800000000).
 */
export type CounterWindow = BudgetWindow | 'run';

/**
 * One budget counter: a key's (`alice`) or one of its end users' (`alice/bob`) spend in a window,
 * or a limited run's with every run below it (`run/<run id>`, window `run`).
 */
export interface CounterRef {
  counter: string;
  window: CounterWindow;
}

/** A limit a reservation must fit: BUDGETS' (CounterLimit) or a run's own. */
export interface ReservedLimit extends CounterRef {
  amount: number;
  unit: 'usd' | 'tokens';
}

/** The counter of a run's own limits, which every call of the run and of the runs below it reserves on. */
export function runCounter(runId: string): string {
  return `run/${runId}`;
}

/** A run whose session has limits of its own: its `maxTokens` and `maxCostUsd` (null: none). */
export interface LimitedRun {
  runId: string;
  maxTokens: number | null;
  maxCostUsd: number | null;
}

/** A limit that applies, as GET /v1/usage lists it: what it is, its window, what is used and left. */
export interface LimitStanding {
  limit: string;
  window: BudgetWindow;
  used: number;
  left: number;
}

/** What a model call asks to reserve before it is sent: its prompt, and as much output as fits. */
export interface ReservationAsk {
  /** Who holds the reservation until it is given back: a run, or a call outside any run (a uuid of its own). */
  runId: string;
  owner: string;
  limits: readonly ReservedLimit[];
  /** The prompt's tokens, counted as an upper bound, and their cost at the input price. */
  promptTokens: number;
  promptUsd: number;
  /** USD of one output token; 0 when the model has no price (it spends nothing against usd limits). */
  outputUsdPerToken: number;
  /** The output tokens asked for, and the fewest worth a call. */
  maxOutput: number;
  minOutput: number;
}

/**
 * A reservation's answer: the output tokens reserved (the call asks for no more), or none — `wait`
 * when the reservations in flight could leave room once they are given back, `spent` when what is
 * used already leaves none.
 */
export type Reservation = { granted: number } | { refused: 'wait' | 'spent' };

/** A counter as it stands now: used and reserved. */
export interface CounterState extends CounterRef {
  tokens: number;
  costUsd: number;
  reservedTokens: number;
  reservedUsd: number;
}

/** Sorted, distinct counters: every statement moves them in this one order (no deadlock between two). */
export function sortedCounters(refs: readonly CounterRef[]): CounterRef[] {
  const seen = new Map<string, CounterRef>();
  for (const r of refs) seen.set(`${r.counter}\u0000${r.window}`, r);
  return [...seen.values()].sort((a, b) =>
    a.counter === b.counter ? a.window.localeCompare(b.window) : a.counter < b.counter ? -1 : 1,
  );
}

/**
 * The statement part that moves the budget counters: adds a call's tokens and cost to `counters`
 * (each in its current window, by the database's clock) and, with `release`, gives back what that
 * run had reserved (in the windows it reserved in) — and adds the call to the run counters it
 * reserved on (its own and its ancestors' limits: those it reserved on are exactly those that limit
 * it) — as one delta per counter (key_spend_deltas), folded in by the counter's next reservation.
 * Null when there is nothing to move.
 */
export function countersSql(
  p: Params,
  spend: { counters: readonly CounterRef[]; tokens: number; costUsd: number },
  release: string | null,
): string | null {
  const counters = sortedCounters(spend.counters);
  if (counters.length === 0 && release === null) return null;
  const parts: string[] = [];
  if (counters.length > 0) {
    parts.push(
      `SELECT c, w, budget_window(w), ${p.add(spend.tokens)}::bigint, ${p.add(spend.costUsd)}::numeric,
              0::bigint, 0::numeric
         FROM unnest(${p.add(counters.map((c) => c.counter))}::text[], ${p.add(counters.map((c) => c.window))}::text[]) AS t(c, w)`,
    );
  }
  if (release !== null) {
    parts.push(
      `SELECT counter, window_kind, window_start,
              CASE WHEN window_kind = 'run' THEN ${p.add(spend.tokens)}::bigint ELSE 0 END,
              CASE WHEN window_kind = 'run' THEN ${p.add(spend.costUsd)}::numeric ELSE 0 END, -tokens, -cost_usd
         FROM budget_reservations WHERE run_id = ${p.add(release)}::uuid`,
    );
  }
  // Appended, not added: the counters' next reservation folds it in (fold_spend), so no statement
  // that stores a call waits for the key's counter row.
  return `INSERT INTO key_spend_deltas (owner, window_kind, window_start, tokens, cost_usd, reserved_tokens, reserved_usd)
          SELECT c, w, s, sum(t), sum(u)::float8, sum(rt), sum(ru)
            FROM (${parts.join(' UNION ALL ')}) AS x(c, w, s, t, u, rt, ru)
           GROUP BY 1, 2, 3`;
}

/** The part that forgets a run's reservations (with countersSql's release, in the same statement). */
export function releaseSql(p: Params, runId: string): string {
  return `DELETE FROM budget_reservations WHERE run_id = ${p.add(runId)}::uuid`;
}

/**
 * Reservations against the budget counters: `reserve` is one statement (the `reserve_budgets`
 * function, migrations 1797850000000 and 1797870000000, shared by the reservations asked at once)
 * that locks the counters a call is limited by, in a fixed order, for that statement only, folds in
 * what stored calls moved on them (`key_spend_deltas`), and reserves its prompt and the output that
 * fits on all of them or on none.
 */
@Injectable()
export class BudgetStore {
  private readonly batcher: ReservationBatcher;

  constructor(@InjectDataSource() private readonly db: DataSource) {
    this.batcher = new ReservationBatcher(db.manager);
  }

  /**
   * Reserves `ask` for its holder (on top of what it holds), with the reservations asked meanwhile
   * (ReservationBatcher). `replacing`: what the holder holds is given back first, in the same
   * statement.
   */
  async reserve(ask: ReservationAsk, replacing = false): Promise<Reservation> {
    const granted = await this.batcher.reserve({
      run: ask.runId,
      owner: ask.owner,
      counters: ask.limits.map((l) => l.counter),
      windows: ask.limits.map((l) => l.window),
      units: ask.limits.map((l) => l.unit),
      amounts: ask.limits.map((l) => l.amount),
      promptTokens: ask.promptTokens,
      promptUsd: ask.promptUsd,
      outUsd: ask.outputUsdPerToken,
      maxOut: ask.maxOutput,
      minOut: ask.minOutput,
      replacing,
    });
    return granted >= 0 ? { granted } : { refused: granted === -1 ? 'wait' : 'spent' };
  }

  /**
   * Gives back what `holder` has reserved, when no call's usage is stored with it (a call outside any
   * run that was never sent, or failed before it was stored): one statement, nothing when it holds none.
   */
  async release(holder: string): Promise<void> {
    await runBuilt(this.db.manager, (p) => {
      const moved = countersSql(p, { counters: [], tokens: 0, costUsd: 0 }, holder);
      return withCtes(moved === null ? [] : [moved, releaseSql(p, holder)], 'SELECT 1');
    });
  }

  /**
   * The runs above a child run whose sessions have limits of their own, nearest first: the run that
   * delegated it (`parentRunId`), the run that delegated that one, … up to the root.
   */
  async limitedAncestors(parentRunId: string): Promise<LimitedRun[]> {
    const rows: { runId: string; maxTokens: number | null; maxCostUsd: number | null }[] =
      await this.db.query(
        `WITH RECURSIVE up(run_id, depth) AS (
         SELECT $1::uuid, 0
         UNION ALL
         SELECT s.parent_run_id, up.depth + 1
           FROM up JOIN runs r ON r.id = up.run_id JOIN sessions s ON s.id = r.session_id
          WHERE s.parent_run_id IS NOT NULL AND up.depth < 16)
       SELECT up.run_id AS "runId", s.max_tokens AS "maxTokens", s.max_cost_usd AS "maxCostUsd"
         FROM up JOIN runs r ON r.id = up.run_id JOIN sessions s ON s.id = r.session_id
        WHERE s.max_tokens IS NOT NULL OR s.max_cost_usd IS NOT NULL
        ORDER BY up.depth`,
        [parentRunId],
      );
    return rows;
  }

  /**
   * Gives back the reservations no run holds that are older than `ageMs`: a start's first call whose
   * process died before the start was stored, an on-demand summary's whose process died. A live one
   * is given back by its own statements long before (its call has ended); one statement each.
   */
  async releaseOrphans(ageMs: number): Promise<void> {
    const rows: { holder: string }[] = await this.db.query(
      `SELECT DISTINCT b.run_id AS holder FROM budget_reservations b
        WHERE b.created_at < now() - $1::int * interval '1 millisecond'
          AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = b.run_id)`,
      [ageMs],
    );
    for (const { holder } of rows) await this.release(holder);
  }

  /**
   * Deletes the counters of runs that have ended (`run/<id>`: a run's own limits hold for that run
   * only), so key_spend does not grow a row per run; a call of a run below an ended one finds its
   * counter gone and makes no call (reserve_budgets), and its deltas go with it. An index scan of
   * the few run counters there are.
   */
  async forgetEndedRuns(): Promise<void> {
    await this.db.query(
      `WITH gone AS (
         DELETE FROM key_spend k
          WHERE k.window_kind = 'run'
            AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = substr(k.owner, 5)::uuid
                               AND r.status IN ('queued', 'running', 'requires_action'))
         RETURNING k.owner
       )
       DELETE FROM key_spend_deltas x WHERE x.window_kind = 'run' AND x.owner IN (SELECT owner FROM gone)`,
    );
  }

  /**
   * Folds every counter's spend deltas in (fold_spend): those of counters no one reserves on any
   * more, a window that has rolled over. The counters' reservations fold their own as they go.
   */
  async foldSpend(): Promise<void> {
    await this.db.query(`SELECT fold_spend(NULL, NULL)`);
  }

  /**
   * Each limit with what its window has used (committed calls) and what is left of it now — less
   * what the calls in flight have reserved.
   */
  async standings(limits: readonly CounterLimit[]): Promise<LimitStanding[]> {
    const states = await this.counters(limits);
    return limits.map((l) => {
      const { used, reserved } = standing(l, states);
      return { limit: limitName(l), window: l.window, used, left: Math.max(0, l.amount - used - reserved) };
    });
  }

  /** The counters as they stand now, in their current windows (absent ones have used nothing). */
  async counters(refs: readonly CounterRef[]): Promise<CounterState[]> {
    const counters = sortedCounters(refs);
    if (counters.length === 0) return [];
    const rows: {
      counter: string;
      window: CounterWindow;
      tokens: string;
      costUsd: number;
      rt: string;
      ru: string;
    }[] = await this.db.query(
      `SELECT t.c AS counter, t.w AS "window", coalesce(k.tokens, 0) + coalesce(d.tokens, 0) AS tokens,
                coalesce(k.cost_usd, 0) + coalesce(d.cost_usd, 0) AS "costUsd",
                coalesce(k.reserved_tokens, 0) + coalesce(d.reserved_tokens, 0) AS rt,
                coalesce(k.reserved_usd, 0) + coalesce(d.reserved_usd, 0) AS ru
           FROM unnest($1::text[], $2::text[]) AS t(c, w)
           LEFT JOIN key_spend k
             ON k.owner = t.c AND k.window_kind = t.w AND k.window_start = budget_window(t.w)
           LEFT JOIN LATERAL (
             SELECT sum(x.tokens) AS tokens, sum(x.cost_usd) AS cost_usd,
                    sum(x.reserved_tokens) AS reserved_tokens, sum(x.reserved_usd) AS reserved_usd
               FROM key_spend_deltas x
              WHERE x.owner = t.c AND x.window_kind = t.w AND x.window_start = budget_window(t.w)
           ) d ON true`,
      [counters.map((c) => c.counter), counters.map((c) => c.window)],
    );
    return rows.map((r) => ({
      counter: r.counter,
      window: r.window,
      tokens: Number(r.tokens),
      costUsd: r.costUsd,
      reservedTokens: Number(r.rt),
      reservedUsd: Number(r.ru),
    }));
  }
}

/** What a limit's counter has used and has reserved, in the limit's unit. */
export function standing(
  l: CounterLimit,
  states: readonly CounterState[],
): { used: number; reserved: number } {
  const s = states.find((c) => c.counter === l.counter && c.window === l.window);
  if (!s) return { used: 0, reserved: 0 };
  return l.unit === 'usd'
    ? { used: s.costUsd, reserved: s.reservedUsd }
    : { used: s.tokens, reserved: s.reservedTokens };
}
