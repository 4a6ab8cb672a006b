import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Uploaded files ("Attachments"): `files` (one row per upload, owned by a key and an end user) over
 * `file_blobs` (once per sha256) and its bytes in parts of at most 1 MiB (`file_blob_parts`, kept
 * uncompressed: images and PDFs are compressed already).
 */
export class Files1797200000000 implements MigrationInterface {
  name = 'Files1797200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "file_blobs" ("sha256" text NOT NULL, "size" integer NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "pk_file_blobs" PRIMARY KEY ("sha256"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "file_blob_parts" ("sha256" text NOT NULL, "seq" integer NOT NULL, "bytes" bytea NOT NULL, CONSTRAINT "pk_file_blob_parts" PRIMARY KEY ("sha256", "seq"))`,
    );
    await queryRunner.query(`ALTER TABLE "file_blob_parts" ALTER COLUMN "bytes" SET STORAGE EXTERNAL`);
    await queryRunner.query(
      `ALTER TABLE "file_blob_parts" ADD CONSTRAINT "fk_file_blob_parts_blob" FOREIGN KEY ("sha256") REFERENCES "file_blobs"("sha256") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `CREATE TABLE "files" ("id" uuid NOT NULL, "owner" text NOT NULL, "end_user" text, "name" text NOT NULL, "media_type" text NOT NULL, "size" integer NOT NULL, "sha256" text NOT NULL, "width" integer, "height" integer, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "pk_files" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "idx_files_owner_created" ON "files" ("owner", "created_at", "id") `,
    );
    await queryRunner.query(`CREATE INDEX "idx_files_sha256" ON "files" ("sha256") `);
    await queryRunner.query(
      `ALTER TABLE "files" ADD CONSTRAINT "fk_files_blob" FOREIGN KEY ("sha256") REFERENCES "file_blobs"("sha256") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "files"`);
    await queryRunner.query(`DROP TABLE "file_blob_parts"`);
    await queryRunner.query(`DROP TABLE "file_blobs"`);
  }
}
