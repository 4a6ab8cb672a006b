import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A session's reasoning level; an assistant message's reasoning and its provider's opaque data. */
export class ModelProviders1795500000000 implements MigrationInterface {
  name = 'ModelProviders1795500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "sessions" ADD "reasoning" text`);
    await queryRunner.query(`ALTER TABLE "messages" ADD "reasoning" text`);
    await queryRunner.query(`ALTER TABLE "messages" ADD "provider_data" jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "messages" DROP COLUMN "provider_data"`);
    await queryRunner.query(`ALTER TABLE "messages" DROP COLUMN "reasoning"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "reasoning"`);
  }
}
