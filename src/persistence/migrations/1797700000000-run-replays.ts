import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A replayed run names the run it replays and how many of its steps come from the record
 * (`{ of, steps }`, steps null: all of them); null for every other run ("Fork and replay").
 */
export class RunReplays1797700000000 implements MigrationInterface {
  name = 'RunReplays1797700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "runs" ADD "replay" jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "runs" DROP COLUMN "replay"`);
  }
}
