import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { FileBlobEntity } from './file-blob.entity';

/** One upload ("Attachments"): its name, type and owner; its bytes are its blob's, shared with identical uploads. */
@Entity({ name: 'files' })
@Index('idx_files_owner_created', ['owner', 'createdAt', 'id'])
@Index('idx_files_sha256', ['sha256'])
export class FileEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_files' })
  id!: string;

  /** The API key's name. */
  @Column({ type: 'text' })
  owner!: string;

  /** The end user it was uploaded for (X-End-User); null: the key's own. */
  @Column({ name: 'end_user', type: 'text', nullable: true })
  endUser!: string | null;

  @Column({ type: 'text' })
  name!: string;

  @Column({ name: 'media_type', type: 'text' })
  mediaType!: string;

  @Column({ type: 'integer' })
  size!: number;

  @Column({ type: 'text' })
  sha256!: string;

  @ManyToOne(() => FileBlobEntity, { onDelete: 'NO ACTION' })
  @JoinColumn({ name: 'sha256', foreignKeyConstraintName: 'fk_files_blob' })
  blob?: FileBlobEntity;

  /** An image's dimensions in pixels (null for anything else). */
  @Column({ type: 'integer', nullable: true })
  width!: number | null;

  @Column({ type: 'integer', nullable: true })
  height!: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
