import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks and their durable outbox ("Schedules and webhooks"): a key's webhooks, one row per event
 * owed to one of them (inserted with the run state it reports, leased by the process attempting it),
 * and every attempt made.
 */
export class Webhooks1797600000000 implements MigrationInterface {
  name = 'Webhooks1797600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "webhooks" ("id" uuid NOT NULL, "owner" text NOT NULL, "end_user" text, "url" text NOT NULL, "events" text array NOT NULL, "secret" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "pk_webhooks" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_webhooks_owner" ON "webhooks"  ("owner") `);
    await queryRunner.query(
      `CREATE TABLE "webhook_deliveries" ("id" uuid NOT NULL, "webhook_id" uuid NOT NULL, "run_id" uuid NOT NULL, "type" text NOT NULL, "data" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "next_attempt_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "attempts" integer NOT NULL DEFAULT '0', "lease_owner" text, "lease_expires_at" TIMESTAMP WITH TIME ZONE, "done_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "pk_webhook_deliveries" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_webhook_deliveries_webhook" ON "webhook_deliveries"  ("webhook_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_webhook_deliveries_due" ON "webhook_deliveries"  ("next_attempt_at") WHERE done_at IS NULL`,
    );
    await queryRunner.query(
      `CREATE TABLE "webhook_attempts" ("id" BIGSERIAL NOT NULL, "delivery_id" uuid NOT NULL, "webhook_id" uuid NOT NULL, "type" text NOT NULL, "attempt" integer NOT NULL, "status" integer, "error" text, "at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "pk_webhook_attempts" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_webhook_attempts_webhook_at" ON "webhook_attempts"  ("webhook_id", "at") `,
    );
    await queryRunner.query(
      `ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "fk_webhook_deliveries_webhook" FOREIGN KEY ("webhook_id") REFERENCES "webhooks"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "webhook_attempts" ADD CONSTRAINT "fk_webhook_attempts_delivery" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "webhook_attempts" DROP CONSTRAINT "fk_webhook_attempts_delivery"`);
    await queryRunner.query(
      `ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "fk_webhook_deliveries_webhook"`,
    );
    await queryRunner.query(`DROP INDEX "public"."ix_webhook_attempts_webhook_at"`);
    await queryRunner.query(`DROP TABLE "webhook_attempts"`);
    await queryRunner.query(`DROP INDEX "public"."ix_webhook_deliveries_due"`);
    await queryRunner.query(`DROP INDEX "public"."ix_webhook_deliveries_webhook"`);
    await queryRunner.query(`DROP TABLE "webhook_deliveries"`);
    await queryRunner.query(`DROP INDEX "public"."ix_webhooks_owner"`);
    await queryRunner.query(`DROP TABLE "webhooks"`);
  }
}
