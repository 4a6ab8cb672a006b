import type { MigrationInterface, QueryRunner } from 'typeorm';

export class OwnerActiveRuns1795417890573 implements MigrationInterface {
  name = 'OwnerActiveRuns1795417890573';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "idx_runs_owner_active" ON "runs"  ("owner") WHERE status IN ('running', 'requires_action')`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."idx_runs_owner_active"`);
  }
}
