import type { MigrationInterface, QueryRunner } from 'typeorm';

export class TeamUsage1795779091472 implements MigrationInterface {
  name = 'TeamUsage1795779091472';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "key_spend" ("owner" text NOT NULL, "window_kind" text NOT NULL, "window_start" TIMESTAMP WITH TIME ZONE NOT NULL, "tokens" bigint NOT NULL DEFAULT '0', "cost_usd" double precision NOT NULL DEFAULT '0', CONSTRAINT "pk_key_spend" PRIMARY KEY ("owner", "window_kind", "window_start"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "model_calls" ("id" uuid NOT NULL, "run_id" uuid NOT NULL, "session_id" uuid NOT NULL, "owner" text NOT NULL, "iteration" integer NOT NULL, "provider" text NOT NULL, "model" text NOT NULL, "prompt_tokens" integer NOT NULL, "completion_tokens" integer NOT NULL, "cache_read_tokens" integer NOT NULL DEFAULT '0', "cache_write_tokens" integer NOT NULL DEFAULT '0', "reasoning_tokens" integer NOT NULL DEFAULT '0', "cost_usd" double precision, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "pk_model_calls" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_model_calls_created" ON "model_calls"  ("created_at") `);
    await queryRunner.query(
      `CREATE INDEX "ix_model_calls_owner_created" ON "model_calls"  ("owner", "created_at") `,
    );
    await queryRunner.query(`ALTER TABLE "sessions" ADD "max_tokens" integer`);
    await queryRunner.query(`ALTER TABLE "sessions" ADD "max_cost_usd" double precision`);
    await queryRunner.query(`ALTER TABLE "runs" ADD "cost_usd" double precision`);
    await queryRunner.query(`ALTER TABLE "runs" ADD "trace_parent" text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "runs" DROP COLUMN "trace_parent"`);
    await queryRunner.query(`ALTER TABLE "runs" DROP COLUMN "cost_usd"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "max_cost_usd"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "max_tokens"`);
    await queryRunner.query(`DROP INDEX "public"."ix_model_calls_owner_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_model_calls_created"`);
    await queryRunner.query(`DROP TABLE "model_calls"`);
    await queryRunner.query(`DROP TABLE "key_spend"`);
  }
}
