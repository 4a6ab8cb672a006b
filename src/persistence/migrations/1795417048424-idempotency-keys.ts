import type { MigrationInterface, QueryRunner } from 'typeorm';

export class IdempotencyKeys1795417048424 implements MigrationInterface {
  name = 'IdempotencyKeys1795417048424';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "idempotency_keys" ("owner" text NOT NULL, "scope" text NOT NULL, "key" text NOT NULL, "request" jsonb NOT NULL, "run_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "pk_idempotency_keys" PRIMARY KEY ("owner", "scope", "key"))`,
    );
    await queryRunner.query(`CREATE INDEX "ix_idempotency_keys_run" ON "idempotency_keys"  ("run_id") `);
    await queryRunner.query(
      `CREATE INDEX "ix_idempotency_keys_owner_created" ON "idempotency_keys"  ("owner", "created_at") `,
    );
    await queryRunner.query(
      `ALTER TABLE "idempotency_keys" ADD CONSTRAINT "fk_idempotency_keys_run" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE NO ACTION DEFERRABLE INITIALLY DEFERRED`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "idempotency_keys" DROP CONSTRAINT "fk_idempotency_keys_run"`);
    await queryRunner.query(`DROP INDEX "public"."ix_idempotency_keys_owner_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_idempotency_keys_run"`);
    await queryRunner.query(`DROP TABLE "idempotency_keys"`);
  }
}
