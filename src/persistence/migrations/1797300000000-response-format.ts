import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Structured output: a session's `responseFormat`, the one each run answers against (the session's,
 * or its prompt's), and how many corrective turns the run has had (at most one).
 */
export class ResponseFormat1797300000000 implements MigrationInterface {
  name = 'ResponseFormat1797300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "sessions" ADD "response_format" jsonb`);
    await queryRunner.query(`ALTER TABLE "runs" ADD "response_format" jsonb`);
    await queryRunner.query(`ALTER TABLE "runs" ADD "output_corrections" integer NOT NULL DEFAULT '0'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "runs" DROP COLUMN "output_corrections"`);
    await queryRunner.query(`ALTER TABLE "runs" DROP COLUMN "response_format"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "response_format"`);
  }
}
