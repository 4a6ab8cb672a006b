import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A budget reservation knows when it was made: one whose holder is no run — the first call of a
 * start whose process died before the start was stored, an on-demand summary's whose process died —
 * is given back once it is older than any such call lasts (RunSupervisor), instead of being held
 * until its window rolls over.
 */
export class ReservationAges1797830000000 implements MigrationInterface {
  name = 'ReservationAges1797830000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "budget_reservations" ADD "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "budget_reservations" DROP COLUMN "created_at"`);
  }
}
