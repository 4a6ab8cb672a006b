import type { MigrationInterface, QueryRunner } from 'typeorm';
import { reserveBudgets } from './1797850000000-reservation-batches';

/**
 * What a call spent and gave back is no longer added to its counters by the statement that stores
 * it: that statement appends it to `key_spend_deltas`, and the next reservation on those counters
 * folds the deltas in (`fold_spend`, inside `reserve_budgets`, under the counters' lock) — as does
 * every process now and then for counters no one reserves on. At c=256 under a key's budget each
 * step's statement locked the key's one counter row until it committed, and everything else queued
 * for it. Until folded, a counter still holds the call's whole reservation instead of its spend;
 * every reservation folds its counters first, so none decides on a stale counter, and readers add
 * the deltas (BudgetStore.counters). A run's counter that is gone (its run ended) is not made again.
 */
export class SpendDeltas1797860000000 implements MigrationInterface {
  name = 'SpendDeltas1797860000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "key_spend_deltas" ("id" BIGSERIAL NOT NULL, "owner" text NOT NULL, "window_kind" text NOT NULL, "window_start" TIMESTAMP WITH TIME ZONE NOT NULL, "tokens" bigint NOT NULL, "cost_usd" double precision NOT NULL, "reserved_tokens" bigint NOT NULL, "reserved_usd" numeric NOT NULL, CONSTRAINT "pk_key_spend_deltas" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_key_spend_deltas_counter" ON "key_spend_deltas" ("owner", "window_kind", "window_start") `,
    );
    // Of the counters' current windows (those a reservation has locked); p_counters null: every
    // counter's, in every window.
    await queryRunner.query(`
      CREATE FUNCTION fold_spend(p_counters text[], p_windows text[]) RETURNS void LANGUAGE sql AS $$
        WITH d AS (
          DELETE FROM key_spend_deltas x
           WHERE p_counters IS NULL
              OR ((x.owner, x.window_kind) IN (SELECT c, w FROM unnest(p_counters, p_windows) AS t(c, w))
                  AND x.window_start = budget_window(x.window_kind))
          RETURNING x.owner, x.window_kind, x.window_start, x.tokens, x.cost_usd, x.reserved_tokens,
                    x.reserved_usd
        )
        INSERT INTO key_spend (owner, window_kind, window_start, tokens, cost_usd, reserved_tokens, reserved_usd)
        SELECT owner, window_kind, window_start, sum(tokens), sum(cost_usd::numeric)::float8,
               sum(reserved_tokens), sum(reserved_usd)
          FROM d
         WHERE window_kind <> 'run'
            OR EXISTS (SELECT 1 FROM key_spend k WHERE k.owner = d.owner AND k.window_kind = 'run')
         GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (owner, window_kind, window_start)
        DO UPDATE SET tokens = key_spend.tokens + excluded.tokens,
                      cost_usd = (key_spend.cost_usd::numeric + excluded.cost_usd::numeric)::float8,
                      reserved_tokens = key_spend.reserved_tokens + excluded.reserved_tokens,
                      reserved_usd = key_spend.reserved_usd + excluded.reserved_usd
      $$`);
    await queryRunner.query(reserveBudgets(true));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`SELECT fold_spend(NULL, NULL)`);
    await queryRunner.query(reserveBudgets(false));
    await queryRunner.query(`DROP FUNCTION fold_spend`);
    await queryRunner.query(`DROP TABLE "key_spend_deltas"`);
  }
}
