import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One on-demand compaction of a session at a time, across replicas: the claim taken before the
 * summary's model call, and until when it holds (store/compaction-claim.ts).
 */
export class SessionCompactionClaims1795900000000 implements MigrationInterface {
  name = 'SessionCompactionClaims1795900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "sessions" ADD "compaction_claim" uuid`);
    await queryRunner.query(`ALTER TABLE "sessions" ADD "compaction_claimed_until" TIMESTAMP WITH TIME ZONE`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "compaction_claimed_until"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "compaction_claim"`);
  }
}
