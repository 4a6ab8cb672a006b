import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The webhook outbox is pruned (docs/webhooks.md): a delivered event's row goes with its successful
 * attempt, a given-up one and every attempt after WEBHOOK_RETENTION_HOURS. An attempt so outlives
 * its event's row: it belongs to its webhook (deleted with it) rather than to the row, and each table
 * gets the index its pruning reads.
 */
export class WebhookPruning1797820000000 implements MigrationInterface {
  name = 'WebhookPruning1797820000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "webhook_attempts" DROP CONSTRAINT "fk_webhook_attempts_delivery"`);
    await queryRunner.query(
      `ALTER TABLE "webhook_attempts" ADD CONSTRAINT "fk_webhook_attempts_webhook" FOREIGN KEY ("webhook_id") REFERENCES "webhooks"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(`CREATE INDEX "ix_webhook_attempts_at" ON "webhook_attempts" ("at") `);
    await queryRunner.query(
      `CREATE INDEX "ix_webhook_deliveries_done" ON "webhook_deliveries" ("done_at") WHERE done_at IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."ix_webhook_deliveries_done"`);
    await queryRunner.query(`DROP INDEX "public"."ix_webhook_attempts_at"`);
    await queryRunner.query(`ALTER TABLE "webhook_attempts" DROP CONSTRAINT "fk_webhook_attempts_webhook"`);
    // Attempts of events already pruned have no row to name: they go, as a cascade would have taken them.
    await queryRunner.query(
      `DELETE FROM "webhook_attempts" a WHERE NOT EXISTS (SELECT 1 FROM "webhook_deliveries" d WHERE d.id = a.delivery_id)`,
    );
    await queryRunner.query(
      `ALTER TABLE "webhook_attempts" ADD CONSTRAINT "fk_webhook_attempts_delivery" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }
}
