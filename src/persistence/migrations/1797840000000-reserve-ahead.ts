import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `rereserve_budget`: a run's next model call reserved in place of what the run holds — given back
 * and reserved again in one statement (RunAccounting.reserveAhead), so that the reservation can be
 * made while the step before it is stored: that step's statement then keeps the run's reservation,
 * and nothing but this statement gives it back until the next step's. The counters given back are
 * locked first, in the order every statement locks them.
 */
export class ReserveAhead1797840000000 implements MigrationInterface {
  name = 'ReserveAhead1797840000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION rereserve_budget(p_run uuid, p_owner text, p_counters text[], p_windows text[],
                                       p_units text[], p_amounts numeric[], p_prompt_tokens bigint,
                                       p_prompt_usd numeric, p_out_usd numeric, p_max_out integer,
                                       p_min_out integer)
      RETURNS integer LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM 1 FROM key_spend k
          JOIN budget_reservations b
            ON k.owner = b.counter AND k.window_kind = b.window_kind AND k.window_start = b.window_start
         WHERE b.run_id = p_run
         ORDER BY k.owner, k.window_kind
           FOR UPDATE OF k;
        UPDATE key_spend k
           SET reserved_tokens = k.reserved_tokens - b.tokens,
               reserved_usd = k.reserved_usd - b.cost_usd
          FROM budget_reservations b
         WHERE b.run_id = p_run
           AND k.owner = b.counter AND k.window_kind = b.window_kind AND k.window_start = b.window_start;
        DELETE FROM budget_reservations WHERE run_id = p_run;
        RETURN reserve_budget(p_run, p_owner, p_counters, p_windows, p_units, p_amounts, p_prompt_tokens,
                              p_prompt_usd, p_out_usd, p_max_out, p_min_out);
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION rereserve_budget`);
  }
}
