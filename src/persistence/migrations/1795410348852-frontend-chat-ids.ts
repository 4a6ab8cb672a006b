import type { MigrationInterface, QueryRunner } from 'typeorm';

export class FrontendChatIds1795410348852 implements MigrationInterface {
  name = 'FrontendChatIds1795410348852';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "sessions" ADD "chat_id" text`);
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_sessions_owner_chat" ON "sessions" ("owner", "chat_id") WHERE chat_id IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."uq_sessions_owner_chat"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "chat_id"`);
  }
}
