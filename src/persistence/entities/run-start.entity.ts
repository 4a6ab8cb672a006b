import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * When each key started a run, for RATE_LIMIT_RUNS_PER_MINUTE: kept apart from `runs` (no foreign key,
 * no cascade), so deleting sessions does not give a key its minute back. Rows older than the minute
 * are pruned as runs start.
 */
@Entity({ name: 'run_starts' })
@Index('ix_run_starts_owner_started', ['owner', 'startedAt'])
export class RunStartEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', primaryKeyConstraintName: 'pk_run_starts' })
  id!: string;

  @Column({ type: 'text' })
  owner!: string;

  @Column({ name: 'started_at', type: 'timestamptz', default: () => 'now()' })
  startedAt!: Date;
}
