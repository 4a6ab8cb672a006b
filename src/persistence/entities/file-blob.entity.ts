import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

/**
 * The bytes of uploaded files, stored once however many files hold them ("Attachments"): keyed by
 * their sha256, removed with the last file that references them. The bytes themselves are parts of
 * at most 1 MiB (FileBlobPartEntity): a 20 MiB file is written and read a part per statement, never
 * copied whole into one query's parameters or answer (which would hold the event loop).
 */
@Entity({ name: 'file_blobs' })
export class FileBlobEntity {
  /** Lowercase hex. */
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'pk_file_blobs' })
  sha256!: string;

  @Column({ type: 'integer' })
  size!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

/** One part of a blob's bytes, in order (`seq` from 0); stored uncompressed (STORAGE EXTERNAL). */
@Entity({ name: 'file_blob_parts' })
export class FileBlobPartEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'pk_file_blob_parts' })
  sha256!: string;

  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'pk_file_blob_parts' })
  seq!: number;

  @ManyToOne(() => FileBlobEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'sha256', foreignKeyConstraintName: 'fk_file_blob_parts_blob' })
  blob?: FileBlobEntity;

  @Column({ type: 'bytea' })
  bytes!: Buffer;
}
