import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Prompts on a cron, and each due time recorded once across every process ("Schedules and webhooks"). */
export class Schedules1797500000001 implements MigrationInterface {
  name = 'Schedules1797500000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "schedules" ("id" uuid NOT NULL, "owner" text NOT NULL, "end_user" text, "cron" text NOT NULL, "timezone" text NOT NULL DEFAULT 'UTC', "prompt" text NOT NULL, "session_id" uuid, "session_options" jsonb NOT NULL DEFAULT '{}', "on_active" text NOT NULL DEFAULT 'enqueue', "enabled" boolean NOT NULL DEFAULT true, "next_run_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "pk_schedules" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "idx_schedules_due" ON "schedules"  ("next_run_at") WHERE enabled`);
    await queryRunner.query(
      `CREATE INDEX "idx_schedules_owner_created" ON "schedules"  ("owner", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "schedule_runs" ("id" uuid NOT NULL, "schedule_id" uuid NOT NULL, "due_at" TIMESTAMP WITH TIME ZONE NOT NULL, "run_id" uuid, "session_id" uuid, "status" text NOT NULL DEFAULT 'pending', "started_at" TIMESTAMP WITH TIME ZONE, "claimed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "pk_schedule_runs" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_schedule_runs_due" ON "schedule_runs"  ("schedule_id", "due_at") `,
    );
    await queryRunner.query(
      `CREATE INDEX "idx_schedule_runs_pending" ON "schedule_runs"  ("claimed_at") WHERE status = 'pending'`,
    );
    await queryRunner.query(
      `ALTER TABLE "schedules" ADD CONSTRAINT "fk_schedules_session" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "schedule_runs" ADD CONSTRAINT "fk_schedule_runs_schedule" FOREIGN KEY ("schedule_id") REFERENCES "schedules"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "schedule_runs"`);
    await queryRunner.query(`DROP TABLE "schedules"`);
  }
}
