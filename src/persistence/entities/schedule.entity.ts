import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  UpdateDateColumn,
} from 'typeorm';
import { SessionEntity } from './session.entity';

/** What a schedule does when its session is busy ("Messages while a run is active"). */
export type ScheduleOnActive = 'reject' | 'enqueue' | 'interrupt';

/**
 * A prompt sent on a cron ("Schedules and webhooks"): `next_run_at` is the next due time, claimed by
 * exactly one process (FOR UPDATE SKIP LOCKED) which records it in `schedule_runs` and advances it.
 */
@Entity({ name: 'schedules' })
@Index('idx_schedules_owner_created', ['owner', 'createdAt', 'id'])
@Index('idx_schedules_due', ['nextRunAt'], { where: 'enabled' })
export class ScheduleEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_schedules' })
  id!: string;

  @Column({ type: 'text' })
  owner!: string;

  /** The end user it belongs to (`X-End-User`); null for the key's own. */
  @Column({ name: 'end_user', type: 'text', nullable: true })
  endUser!: string | null;

  /** Five fields, read by cron-parser. */
  @Column({ type: 'text' })
  cron!: string;

  /** An IANA time zone the cron is read in. */
  @Column({ type: 'text', default: 'UTC' })
  timezone!: string;

  @Column({ type: 'text' })
  prompt!: string;

  /** The session each run is sent to; null: a new session each time, with `session_options`. */
  @Column({ name: 'session_id', type: 'uuid', nullable: true })
  sessionId!: string | null;

  @ManyToOne(() => SessionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id', foreignKeyConstraintName: 'fk_schedules_session' })
  session?: SessionEntity;

  @Column({ name: 'session_options', type: 'jsonb', default: () => "'{}'" })
  sessionOptions!: Record<string, unknown>;

  @Column({ name: 'on_active', type: 'text', default: 'enqueue' })
  onActive!: ScheduleOnActive;

  @Column({ type: 'boolean', default: true })
  enabled!: boolean;

  /** The next due time; null while disabled. */
  @Column({ name: 'next_run_at', type: 'timestamptz', nullable: true })
  nextRunAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

/** One due time of a schedule, recorded once across every process (its unique key): started or skipped. */
@Entity({ name: 'schedule_runs' })
@Index('uq_schedule_runs_due', ['scheduleId', 'dueAt'], { unique: true })
// The claims not settled yet (a moment each), looked at by every tick for those a dead process left.
@Index('idx_schedule_runs_pending', ['claimedAt'], { where: "status = 'pending'" })
export class ScheduleRunEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_schedule_runs' })
  id!: string;

  @Column({ name: 'schedule_id', type: 'uuid' })
  scheduleId!: string;

  @ManyToOne(() => ScheduleEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'schedule_id', foreignKeyConstraintName: 'fk_schedule_runs_schedule' })
  schedule?: ScheduleEntity;

  @Column({ name: 'due_at', type: 'timestamptz' })
  dueAt!: Date;

  /** The run it started; null until started, and for a skipped due time. */
  @Column({ name: 'run_id', type: 'uuid', nullable: true })
  runId!: string | null;

  @Column({ name: 'session_id', type: 'uuid', nullable: true })
  sessionId!: string | null;

  /** `pending` (claimed, not started yet), `started` or `skipped`. */
  @Column({ type: 'text', default: 'pending' })
  status!: string;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt!: Date | null;

  /** When a process claimed it: one still `pending` long after lost its process before the start. */
  @Column({ name: 'claimed_at', type: 'timestamptz', default: () => 'now()' })
  claimedAt!: Date;
}
