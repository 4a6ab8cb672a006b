import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Budgets by reservation, and end users ("Budgets and usage"). Each counter of `key_spend` (a key's,
 * or `<key>/<end user>`'s, per window) keeps beside what was used what calls in flight have
 * reserved; `budget_reservations` says which run holds what, so a call's end (or the take-over of a
 * dead process's run) gives it back. `reserve_budget` is the one statement that reserves a call
 * against every counter that applies, or none: it locks those rows in a fixed order for the length
 * of that statement only. Sessions and model calls name their end user.
 */
export class BudgetReservations1797400000000 implements MigrationInterface {
  name = 'BudgetReservations1797400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "key_spend" ADD "reserved_tokens" bigint NOT NULL DEFAULT '0'`);
    await queryRunner.query(`ALTER TABLE "key_spend" ADD "reserved_usd" numeric NOT NULL DEFAULT '0'`);
    await queryRunner.query(
      `CREATE TABLE "budget_reservations" ("run_id" uuid NOT NULL, "counter" text NOT NULL, "window_kind" text NOT NULL, "window_start" TIMESTAMP WITH TIME ZONE NOT NULL, "owner" text NOT NULL, "tokens" bigint NOT NULL, "cost_usd" numeric NOT NULL, CONSTRAINT "pk_budget_reservations" PRIMARY KEY ("run_id", "counter", "window_kind", "window_start"))`,
    );
    await queryRunner.query(`ALTER TABLE "sessions" ADD "end_user" text`);
    await queryRunner.query(`ALTER TABLE "model_calls" ADD "end_user" text`);
    await queryRunner.query(`
      CREATE FUNCTION reserve_budget(p_run uuid, p_owner text, p_counters text[], p_windows text[],
                                     p_units text[], p_amounts numeric[], p_prompt_tokens bigint,
                                     p_prompt_usd numeric, p_out_usd numeric, p_max_out integer,
                                     p_min_out integer)
      RETURNS integer LANGUAGE plpgsql AS $$
      -- The output tokens reserved (at least p_min_out, at most p_max_out) with the prompt against
      -- every counter; -1: none fits now but would once the reservations in flight are given back;
      -- -2: what is used already leaves no room.
      DECLARE
        fit numeric := p_max_out;
        free numeric := p_max_out;
        l record;
      BEGIN
        INSERT INTO key_spend (owner, window_kind, window_start)
        SELECT DISTINCT c, w, date_trunc(w, now(), 'UTC') FROM unnest(p_counters, p_windows) AS t(c, w)
         ORDER BY 1, 2
        ON CONFLICT DO NOTHING;
        PERFORM 1 FROM key_spend k
          JOIN (SELECT DISTINCT c, w FROM unnest(p_counters, p_windows) AS t(c, w)) t
            ON k.owner = t.c AND k.window_kind = t.w AND k.window_start = date_trunc(t.w, now(), 'UTC')
         ORDER BY k.owner, k.window_kind
           FOR UPDATE OF k;
        FOR l IN
          SELECT t.unit, t.amount, k.tokens, k.cost_usd::numeric AS cost, k.reserved_tokens, k.reserved_usd
            FROM unnest(p_counters, p_windows, p_units, p_amounts) AS t(c, w, unit, amount)
            JOIN key_spend k
              ON k.owner = t.c AND k.window_kind = t.w AND k.window_start = date_trunc(t.w, now(), 'UTC')
        LOOP
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
        IF fit < p_min_out THEN
          RETURN CASE WHEN free >= p_min_out THEN -1 ELSE -2 END;
        END IF;
        UPDATE key_spend k
           SET reserved_tokens = k.reserved_tokens + p_prompt_tokens + fit,
               reserved_usd = k.reserved_usd + p_prompt_usd + fit * p_out_usd
          FROM (SELECT DISTINCT c, w FROM unnest(p_counters, p_windows) AS t(c, w)) t
         WHERE k.owner = t.c AND k.window_kind = t.w AND k.window_start = date_trunc(t.w, now(), 'UTC');
        INSERT INTO budget_reservations (run_id, counter, window_kind, window_start, owner, tokens, cost_usd)
        SELECT DISTINCT p_run, c, w, date_trunc(w, now(), 'UTC'), p_owner, p_prompt_tokens + fit,
               p_prompt_usd + fit * p_out_usd
          FROM unnest(p_counters, p_windows) AS t(c, w)
        ON CONFLICT (run_id, counter, window_kind, window_start)
        DO UPDATE SET tokens = budget_reservations.tokens + excluded.tokens,
                      cost_usd = budget_reservations.cost_usd + excluded.cost_usd;
        RETURN fit::integer;
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION reserve_budget`);
    await queryRunner.query(`ALTER TABLE "model_calls" DROP COLUMN "end_user"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "end_user"`);
    await queryRunner.query(`DROP TABLE "budget_reservations"`);
    await queryRunner.query(`ALTER TABLE "key_spend" DROP COLUMN "reserved_usd"`);
    await queryRunner.query(`ALTER TABLE "key_spend" DROP COLUMN "reserved_tokens"`);
  }
}
