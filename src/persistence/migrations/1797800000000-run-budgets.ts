import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A run's own limits on the budget counters (issue 41, "Budgets and usage"): a session's
 * `maxTokens` / `maxCostUsd` hold for each of its runs with every run below it (its delegations),
 * on a counter per limited run — `run/<run id>`, window kind `run`, whose window never rolls over
 * (one fixed start, `budget_window`). `reserve_budget` reserves on it with the key's counters in one
 * statement; it creates a run's counter only while that run is active, so a call below a run that
 * has ended finds no counter and no room (it never starts the ended run's limit afresh). The
 * counters of ended runs are deleted by a sweep (ix_key_spend_runs keeps it an index scan). Runs
 * active at the upgrade get their counter with what they have used.
 */
export class RunBudgets1797800000000 implements MigrationInterface {
  name = 'RunBudgets1797800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION budget_window(w text) RETURNS timestamptz LANGUAGE sql STABLE AS $$
        SELECT CASE WHEN w = 'run' THEN timestamptz 'epoch' ELSE date_trunc(w, now(), 'UTC') END
      $$`);
    await queryRunner.query(
      `CREATE INDEX "ix_key_spend_runs" ON "key_spend" ("owner") WHERE window_kind = 'run'`,
    );
    await queryRunner.query(`
      INSERT INTO key_spend (owner, window_kind, window_start, tokens, cost_usd)
      SELECT 'run/' || r.id, 'run', timestamptz 'epoch', r.prompt_tokens + r.completion_tokens, coalesce(r.cost_usd, 0)
        FROM runs r JOIN sessions s ON s.id = r.session_id
       WHERE r.status IN ('running', 'requires_action')
         AND (s.max_tokens IS NOT NULL OR s.max_cost_usd IS NOT NULL)`);
    await queryRunner.query(
      reserveBudget(
        `budget_window(w)`,
        `w <> 'run' OR c = 'run/' || p_run
           OR EXISTS (SELECT 1 FROM runs r WHERE r.id = substr(c, 5)::uuid AND r.status IN ('running', 'requires_action'))`,
      ),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(reserveBudget(`date_trunc(w, now(), 'UTC')`, 'true'));
    await queryRunner.query(`DELETE FROM key_spend WHERE window_kind = 'run'`);
    await queryRunner.query(`DROP INDEX "ix_key_spend_runs"`);
    await queryRunner.query(`DROP FUNCTION budget_window`);
  }
}

/**
 * `reserve_budget` (first in migration 1797400000000) with the window of a counter picked by
 * `windowOf(w)` and the counters it may create filtered by `creates` (of `c`, `w`).
 */
function reserveBudget(windowOf: string, creates: string): string {
  const win = (w: string) => windowOf.replace(/\bw\b/, w);
  return `
      CREATE OR REPLACE FUNCTION reserve_budget(p_run uuid, p_owner text, p_counters text[], p_windows text[],
                                     p_units text[], p_amounts numeric[], p_prompt_tokens bigint,
                                     p_prompt_usd numeric, p_out_usd numeric, p_max_out integer,
                                     p_min_out integer)
      RETURNS integer LANGUAGE plpgsql AS $$
      -- The output tokens reserved (at least p_min_out, at most p_max_out) with the prompt against
      -- every counter; -1: none fits now but would once the reservations in flight are given back;
      -- -2: what is used already leaves no room (or a counter that must exist is gone).
      DECLARE
        fit numeric := p_max_out;
        free numeric := p_max_out;
        found_counters integer := 0;
        l record;
      BEGIN
        INSERT INTO key_spend (owner, window_kind, window_start)
        SELECT DISTINCT c, w, ${win('w')} FROM unnest(p_counters, p_windows) AS t(c, w)
         WHERE ${creates}
         ORDER BY 1, 2
        ON CONFLICT DO NOTHING;
        PERFORM 1 FROM key_spend k
          JOIN (SELECT DISTINCT c, w FROM unnest(p_counters, p_windows) AS t(c, w)) t
            ON k.owner = t.c AND k.window_kind = t.w AND k.window_start = ${win('t.w')}
         ORDER BY k.owner, k.window_kind
           FOR UPDATE OF k;
        FOR l IN
          SELECT t.unit, t.amount, k.tokens, k.cost_usd::numeric AS cost, k.reserved_tokens, k.reserved_usd
            FROM unnest(p_counters, p_windows, p_units, p_amounts) AS t(c, w, unit, amount)
            JOIN key_spend k
              ON k.owner = t.c AND k.window_kind = t.w AND k.window_start = ${win('t.w')}
        LOOP
          found_counters := found_counters + 1;
          IF l.unit = 'tokens' THEN
            fit := least(fit, l.amount - l.tokens - l.reserved_tokens - p_prompt_tokens);
            free := least(free, l.amount - l.tokens - p_prompt_tokens);
          ELSIF p_out_usd > 0 THEN
            fit := least(fit, floor((l.amount - l.cost - l.reserved_usd - p_prompt_usd) / p_out_usd));
            free := least(free, floor((l.amount - l.cost - p_prompt_usd) / p_out_usd));
          ELSE
            IF l.amount - l.cost - l.reserved_usd - p_prompt_usd < 0 THEN fit := -1; END IF;
            IF l.amount - l.cost - p_prompt_usd < 0 THEN free := -1; END IF;
          END IF;
        END LOOP;
        IF found_counters < coalesce(array_length(p_counters, 1), 0) THEN
          RETURN -2;
        END IF;
        IF fit < p_min_out THEN
          RETURN CASE WHEN free >= p_min_out THEN -1 ELSE -2 END;
        END IF;
        UPDATE key_spend k
           SET reserved_tokens = k.reserved_tokens + p_prompt_tokens + fit,
               reserved_usd = k.reserved_usd + p_prompt_usd + fit * p_out_usd
          FROM (SELECT DISTINCT c, w FROM unnest(p_counters, p_windows) AS t(c, w)) t
         WHERE k.owner = t.c AND k.window_kind = t.w AND k.window_start = ${win('t.w')};
        INSERT INTO budget_reservations (run_id, counter, window_kind, window_start, owner, tokens, cost_usd)
        SELECT DISTINCT p_run, c, w, ${win('w')}, p_owner, p_prompt_tokens + fit,
               p_prompt_usd + fit * p_out_usd
          FROM unnest(p_counters, p_windows) AS t(c, w)
        ON CONFLICT (run_id, counter, window_kind, window_start)
        DO UPDATE SET tokens = budget_reservations.tokens + excluded.tokens,
                      cost_usd = budget_reservations.cost_usd + excluded.cost_usd;
        RETURN fit::integer;
      END $$`;
}
