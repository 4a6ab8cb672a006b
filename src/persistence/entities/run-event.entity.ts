import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * The run's event log: every event it streamed, so any client can resume from any `seq`. The
 * hottest table (one row per text delta), so it is kept light: `payload` is `json` — stored and
 * read back as the very text that was streamed, never parsed into jsonb and printed again — and
 * there is no foreign key to `runs`, whose check would lock the run's row for every event. Events
 * are only written by statements that update their run in the same statement, and they are
 * deleted with their session (SessionStore.delete).
 */
@Entity({ name: 'run_events' })
export class RunEventEntity {
  @PrimaryColumn({ name: 'run_id', type: 'uuid', primaryKeyConstraintName: 'pk_run_events' })
  runId!: string;

  @PrimaryColumn({ type: 'int', primaryKeyConstraintName: 'pk_run_events' })
  seq!: number;

  @Column({ type: 'text' })
  type!: string;

  @Column({ type: 'json' })
  payload!: unknown;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
