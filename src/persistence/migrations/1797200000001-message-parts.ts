import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A user message's parts ("Attachments"): its text and references to files, in order. */
export class MessageParts1797200000001 implements MigrationInterface {
  name = 'MessageParts1797200000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "messages" ADD "parts" jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "messages" DROP COLUMN "parts"`);
  }
}
