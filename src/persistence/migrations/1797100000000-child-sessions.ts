import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Delegation ("Agents and delegation"): a child session names its parent session, the run and the
 * `delegate` call it answers (one child session, and so one child run, per call: the unique index
 * makes starting it idempotent across processes), the root session (whose workspace it works in) and
 * the root run (the client's, where its approvals are decided), its agent and its depth below the root.
 */
export class ChildSessions1797100000000 implements MigrationInterface {
  name = 'ChildSessions1797100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "sessions" ADD "parent_session_id" uuid`);
    await queryRunner.query(`ALTER TABLE "sessions" ADD "parent_run_id" uuid`);
    await queryRunner.query(`ALTER TABLE "sessions" ADD "parent_call_id" text`);
    await queryRunner.query(`ALTER TABLE "sessions" ADD "root_session_id" uuid`);
    await queryRunner.query(`ALTER TABLE "sessions" ADD "root_run_id" uuid`);
    await queryRunner.query(`ALTER TABLE "sessions" ADD "agent" text`);
    await queryRunner.query(`ALTER TABLE "sessions" ADD "depth" integer NOT NULL DEFAULT '0'`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_sessions_parent_call" ON "sessions" ("parent_run_id", "parent_call_id") WHERE parent_run_id IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "idx_sessions_parent_session" ON "sessions" ("parent_session_id") WHERE parent_session_id IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "idx_tool_calls_awaiting_child" ON "tool_calls" ("run_id") WHERE status = 'awaiting_child'`,
    );
    await queryRunner.query(
      `ALTER TABLE "sessions" ADD CONSTRAINT "fk_sessions_parent_session" FOREIGN KEY ("parent_session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "sessions" DROP CONSTRAINT "fk_sessions_parent_session"`);
    await queryRunner.query(`DROP INDEX "public"."idx_tool_calls_awaiting_child"`);
    await queryRunner.query(`DROP INDEX "public"."idx_sessions_parent_session"`);
    await queryRunner.query(`DROP INDEX "public"."uq_sessions_parent_call"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "depth"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "agent"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "root_run_id"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "root_session_id"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "parent_call_id"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "parent_run_id"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "parent_session_id"`);
  }
}
