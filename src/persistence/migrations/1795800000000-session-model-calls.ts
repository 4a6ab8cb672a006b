import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A model call may belong to a session without a run: the summary `POST /v1/sessions/:id/compact`
 * asks for is stored and counted against its key like any call, with no run to name.
 */
export class SessionModelCalls1795800000000 implements MigrationInterface {
  name = 'SessionModelCalls1795800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "model_calls" ALTER COLUMN "run_id" DROP NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM "model_calls" WHERE "run_id" IS NULL`);
    await queryRunner.query(`ALTER TABLE "model_calls" ALTER COLUMN "run_id" SET NOT NULL`);
  }
}
