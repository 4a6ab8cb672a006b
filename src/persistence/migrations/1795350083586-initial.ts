import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1795350083586 implements MigrationInterface {
  name = 'Initial1795350083586';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "sessions" ("id" uuid NOT NULL, "owner" text NOT NULL, "title" text, "system_prompt" text, "model" text, "mode" text NOT NULL DEFAULT 'safe', "tools" jsonb, "client_tools" jsonb NOT NULL DEFAULT '[]', "max_iterations" integer, "next_message_seq" integer NOT NULL DEFAULT '1', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "pk_sessions" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "idx_sessions_owner_created" ON "sessions"  ("owner", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "messages" ("id" uuid NOT NULL, "session_id" uuid NOT NULL, "seq" integer NOT NULL, "role" text NOT NULL, "content" text, "tool_calls" jsonb, "tool_call_id" text, "run_id" uuid, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "pk_messages" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "idx_messages_run" ON "messages"  ("run_id") `);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_messages_session_seq" ON "messages"  ("session_id", "seq") `,
    );
    await queryRunner.query(
      `CREATE TABLE "runs" ("id" uuid NOT NULL, "session_id" uuid NOT NULL, "owner" text NOT NULL, "status" text NOT NULL, "model" text NOT NULL, "max_iterations" integer NOT NULL, "iterations" integer NOT NULL DEFAULT '0', "prompt_tokens" integer NOT NULL DEFAULT '0', "completion_tokens" integer NOT NULL DEFAULT '0', "error" jsonb, "last_seq" integer NOT NULL DEFAULT '0', "final_message_id" uuid, "lease_owner" text, "lease_expires_at" TIMESTAMP WITH TIME ZONE, "cancel_requested" boolean NOT NULL DEFAULT false, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "finished_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "pk_runs" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "idx_runs_active_lease" ON "runs"  ("lease_expires_at") WHERE status = 'running'`,
    );
    await queryRunner.query(`CREATE INDEX "idx_runs_owner_created" ON "runs"  ("owner", "created_at") `);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_runs_one_active_per_session" ON "runs"  ("session_id") WHERE status IN ('running', 'requires_action')`,
    );
    await queryRunner.query(
      `CREATE TABLE "run_events" ("run_id" uuid NOT NULL, "seq" integer NOT NULL, "type" text NOT NULL, "payload" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "pk_run_events" PRIMARY KEY ("run_id", "seq"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "tool_calls" ("id" uuid NOT NULL, "run_id" uuid NOT NULL, "message_id" uuid NOT NULL, "call_id" text NOT NULL, "iteration" integer NOT NULL, "position" integer NOT NULL, "name" text NOT NULL, "raw_arguments" text NOT NULL, "arguments" jsonb, "executor" text NOT NULL, "status" text NOT NULL, "approval_reason" text, "approval" jsonb, "result" text, "is_error" boolean NOT NULL DEFAULT false, "error_code" text, "truncated" boolean NOT NULL DEFAULT false, "changes" jsonb, "duration_ms" integer, "deadline_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "started_at" TIMESTAMP WITH TIME ZONE, "finished_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "pk_tool_calls" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "idx_tool_calls_deadline" ON "tool_calls"  ("deadline_at") WHERE status IN ('pending_approval', 'awaiting_client')`,
    );
    await queryRunner.query(`CREATE INDEX "idx_tool_calls_message" ON "tool_calls"  ("message_id") `);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_tool_calls_run_call" ON "tool_calls"  ("run_id", "call_id") `,
    );
    await queryRunner.query(
      `ALTER TABLE "messages" ADD CONSTRAINT "fk_messages_session" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "runs" ADD CONSTRAINT "fk_runs_session" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "run_events" ADD CONSTRAINT "fk_run_events_run" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "tool_calls" ADD CONSTRAINT "fk_tool_calls_run" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "tool_calls" ADD CONSTRAINT "fk_tool_calls_message" FOREIGN KEY ("message_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "tool_calls" DROP CONSTRAINT "fk_tool_calls_message"`);
    await queryRunner.query(`ALTER TABLE "tool_calls" DROP CONSTRAINT "fk_tool_calls_run"`);
    await queryRunner.query(`ALTER TABLE "run_events" DROP CONSTRAINT "fk_run_events_run"`);
    await queryRunner.query(`ALTER TABLE "runs" DROP CONSTRAINT "fk_runs_session"`);
    await queryRunner.query(`ALTER TABLE "messages" DROP CONSTRAINT "fk_messages_session"`);
    await queryRunner.query(`DROP INDEX "public"."uq_tool_calls_run_call"`);
    await queryRunner.query(`DROP INDEX "public"."idx_tool_calls_message"`);
    await queryRunner.query(`DROP INDEX "public"."idx_tool_calls_deadline"`);
    await queryRunner.query(`DROP TABLE "tool_calls"`);
    await queryRunner.query(`DROP TABLE "run_events"`);
    await queryRunner.query(`DROP INDEX "public"."uq_runs_one_active_per_session"`);
    await queryRunner.query(`DROP INDEX "public"."idx_runs_owner_created"`);
    await queryRunner.query(`DROP INDEX "public"."idx_runs_active_lease"`);
    await queryRunner.query(`DROP TABLE "runs"`);
    await queryRunner.query(`DROP INDEX "public"."uq_messages_session_seq"`);
    await queryRunner.query(`DROP INDEX "public"."idx_messages_run"`);
    await queryRunner.query(`DROP TABLE "messages"`);
    await queryRunner.query(`DROP INDEX "public"."idx_sessions_owner_created"`);
    await queryRunner.query(`DROP TABLE "sessions"`);
  }
}
