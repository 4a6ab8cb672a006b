import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event log made light (see RunEventEntity): no foreign key to `runs`, and `payload` as `json`.
 * Written by hand: the generated one would drop the column and every stored event with it.
 */
export class LightEventLog1795417824579 implements MigrationInterface {
  name = 'LightEventLog1795417824579';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "run_events" DROP CONSTRAINT "fk_run_events_run"`);
    await queryRunner.query(
      `ALTER TABLE "run_events" ALTER COLUMN "payload" TYPE json USING "payload"::json`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "run_events" ALTER COLUMN "payload" TYPE jsonb USING "payload"::jsonb`,
    );
    await queryRunner.query(
      `DELETE FROM "run_events" e WHERE NOT EXISTS (SELECT 1 FROM "runs" r WHERE r.id = e.run_id)`,
    );
    await queryRunner.query(
      `ALTER TABLE "run_events" ADD CONSTRAINT "fk_run_events_run" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }
}
