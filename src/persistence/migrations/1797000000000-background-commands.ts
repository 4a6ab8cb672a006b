import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Background commands of a session, leased to the process that runs them (BackgroundCommandEntity). */
export class BackgroundCommands1797000000000 implements MigrationInterface {
  name = 'BackgroundCommands1797000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "background_commands" ("id" uuid NOT NULL, "session_id" uuid NOT NULL, "owner" text NOT NULL, "command" text NOT NULL, "status" text NOT NULL DEFAULT 'running', "exit_code" integer, "stop_reason" text, "process_id" uuid NOT NULL, "lease_expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "started_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "ended_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "pk_background_commands" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_background_commands_session" ON "background_commands" ("session_id", "started_at") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_background_commands_running" ON "background_commands" ("lease_expires_at") WHERE status = 'running'`,
    );
    await queryRunner.query(
      `ALTER TABLE "background_commands" ADD CONSTRAINT "fk_background_commands_session" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "background_commands"`);
  }
}
