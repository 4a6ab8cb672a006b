import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `reserve_budgets`: many reservations in one statement (BudgetStore's batches). Every run of a key
 * reserves on the key's one counter row, which each reservation locks until its commit: at c=256
 * under a budget the runs queued for that lock (a start waited 500 ms at the median for its first
 * call's). A batch locks every counter its asks are on once, in the order every statement locks
 * them, then makes each reservation as `reserve_budget` (or `rereserve_budget`, `replacing`) would,
 * in order: one lock for the batch instead of one per call. Answers each ask's result by its place.
 */
export class ReservationBatches1797850000000 implements MigrationInterface {
  name = 'ReservationBatches1797850000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(reserveBudgets(false));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION reserve_budgets`);
  }
}

/**
 * `reserve_budgets`; `foldFirst`: the counters' spend deltas folded in once they are locked
 * (fold_spend, migration 1797860000000).
 */
export function reserveBudgets(foldFirst: boolean): string {
  return `
      CREATE OR REPLACE FUNCTION reserve_budgets(p_asks jsonb) RETURNS TABLE (place integer, granted integer)
      LANGUAGE plpgsql AS $$
      DECLARE
        a jsonb;
        args record;
        cs text[];
        ws text[];
      BEGIN
        SELECT array_agg(x.c ORDER BY x.c, x.w), array_agg(x.w ORDER BY x.c, x.w) INTO cs, ws
          FROM (SELECT DISTINCT u.c, u.w
                  FROM jsonb_array_elements(p_asks) AS e(ask),
                       LATERAL unnest(ARRAY(SELECT jsonb_array_elements_text(e.ask->'counters')),
                                      ARRAY(SELECT jsonb_array_elements_text(e.ask->'windows'))) AS u(c, w)) x;
        PERFORM 1 FROM key_spend k
          JOIN unnest(cs, ws) AS t(c, w)
            ON k.owner = t.c AND k.window_kind = t.w AND k.window_start = budget_window(t.w)
         ORDER BY k.owner, k.window_kind
           FOR UPDATE OF k;
        ${foldFirst ? 'IF cs IS NOT NULL THEN PERFORM fold_spend(cs, ws); END IF;' : ''}
        place := 0;
        FOR a IN SELECT e.ask FROM jsonb_array_elements(p_asks) WITH ORDINALITY AS e(ask, n) ORDER BY e.n LOOP
          SELECT (a->>'run')::uuid AS run, a->>'owner' AS owner,
                 ARRAY(SELECT jsonb_array_elements_text(a->'counters')) AS counters,
                 ARRAY(SELECT jsonb_array_elements_text(a->'windows')) AS windows,
                 ARRAY(SELECT jsonb_array_elements_text(a->'units')) AS units,
                 ARRAY(SELECT jsonb_array_elements_text(a->'amounts')::numeric) AS amounts,
                 (a->>'promptTokens')::bigint AS prompt_tokens, (a->>'promptUsd')::numeric AS prompt_usd,
                 (a->>'outUsd')::numeric AS out_usd, (a->>'maxOut')::integer AS max_out,
                 (a->>'minOut')::integer AS min_out
            INTO args;
          IF (a->>'replacing')::boolean THEN
            granted := rereserve_budget(args.run, args.owner, args.counters, args.windows, args.units,
                                        args.amounts, args.prompt_tokens, args.prompt_usd, args.out_usd,
                                        args.max_out, args.min_out);
          ELSE
            granted := reserve_budget(args.run, args.owner, args.counters, args.windows, args.units,
                                      args.amounts, args.prompt_tokens, args.prompt_usd, args.out_usd,
                                      args.max_out, args.min_out);
          END IF;
          RETURN NEXT;
          place := place + 1;
        END LOOP;
      END $$`;
}
