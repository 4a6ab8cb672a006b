import type { MigrationInterface, QueryRunner } from 'typeorm';

export class RunSupersededBy1795413323169 implements MigrationInterface {
  name = 'RunSupersededBy1795413323169';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "runs" ADD "superseded_by" uuid`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "runs" DROP COLUMN "superseded_by"`);
  }
}
