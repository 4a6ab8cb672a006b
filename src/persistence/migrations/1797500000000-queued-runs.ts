import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Prompts that wait for their session's active run ("Messages while a run is active"): a queued run
 * is a `runs` row with status `queued`, holding its prompt until it starts (only then does the
 * prompt enter the conversation). `queued_at` orders a session's queue; an interrupt's run goes first.
 */
export class QueuedRuns1797500000000 implements MigrationInterface {
  name = 'QueuedRuns1797500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "runs" ADD "queued_prompt" text`);
    await queryRunner.query(`ALTER TABLE "runs" ADD "queued_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(
      `CREATE INDEX "idx_runs_queued" ON "runs" ("session_id", "queued_at", "created_at") WHERE status = 'queued'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."idx_runs_queued"`);
    await queryRunner.query(`ALTER TABLE "runs" DROP COLUMN "queued_at"`);
    await queryRunner.query(`ALTER TABLE "runs" DROP COLUMN "queued_prompt"`);
  }
}
