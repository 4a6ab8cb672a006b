import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every model call counted: a call's row says when its usage was estimated (the provider reported
 * none or only part), and a run keeps every count its calls report (cache, reasoning) and whether
 * any was estimated, so `done.usage` and GET /v1/runs/:id carry them.
 */
export class CountedUsage1796179338219 implements MigrationInterface {
  name = 'CountedUsage1796179338219';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "runs" ADD "cache_read_tokens" integer NOT NULL DEFAULT '0'`);
    await queryRunner.query(`ALTER TABLE "runs" ADD "cache_write_tokens" integer NOT NULL DEFAULT '0'`);
    await queryRunner.query(`ALTER TABLE "runs" ADD "reasoning_tokens" integer NOT NULL DEFAULT '0'`);
    await queryRunner.query(`ALTER TABLE "runs" ADD "usage_estimated" boolean NOT NULL DEFAULT false`);
    await queryRunner.query(`ALTER TABLE "model_calls" ADD "estimated" boolean NOT NULL DEFAULT false`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "model_calls" DROP COLUMN "estimated"`);
    await queryRunner.query(`ALTER TABLE "runs" DROP COLUMN "usage_estimated"`);
    await queryRunner.query(`ALTER TABLE "runs" DROP COLUMN "reasoning_tokens"`);
    await queryRunner.query(`ALTER TABLE "runs" DROP COLUMN "cache_write_tokens"`);
    await queryRunner.query(`ALTER TABLE "runs" DROP COLUMN "cache_read_tokens"`);
  }
}
