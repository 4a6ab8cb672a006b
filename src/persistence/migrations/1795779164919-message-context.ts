import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Long sessions: a message's place in what the model gets (`context`), summaries (`kind`,
 * `summarizes`), and a seq that can sort a summary between two stored messages (x.5).
 */
export class MessageContext1795779164919 implements MigrationInterface {
  name = 'MessageContext1795779164919';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "messages" ADD "context" text`);
    await queryRunner.query(`ALTER TABLE "messages" ADD "kind" text`);
    await queryRunner.query(`ALTER TABLE "messages" ADD "summarizes" jsonb`);
    await queryRunner.query(`ALTER TABLE "messages" ALTER COLUMN "seq" TYPE double precision`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM "messages" WHERE "seq" <> trunc("seq")`);
    await queryRunner.query(`ALTER TABLE "messages" ALTER COLUMN "seq" TYPE integer`);
    await queryRunner.query(`ALTER TABLE "messages" DROP COLUMN "summarizes"`);
    await queryRunner.query(`ALTER TABLE "messages" DROP COLUMN "kind"`);
    await queryRunner.query(`ALTER TABLE "messages" DROP COLUMN "context"`);
  }
}
