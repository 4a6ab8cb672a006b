import type { MigrationInterface, QueryRunner } from 'typeorm';

export class RunResumes1795420000000 implements MigrationInterface {
  name = 'RunResumes1795420000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "runs" ADD "resumes" integer NOT NULL DEFAULT '0'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "runs" DROP COLUMN "resumes"`);
  }
}
