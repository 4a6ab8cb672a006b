import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { SessionEntity } from './session.entity';

/**
 * A background command (`run_command` with `background: true`) of a session: the durable list
 * `GET /v1/sessions/:id/commands` answers with, kept after the command's process stopped. A running
 * row is leased to the server process that runs it (`process_id`, renewed until `lease_expires_at`):
 * one whose lease lapsed reads as stopped by its process (store/background-command-store.service.ts).
 */
@Entity({ name: 'background_commands' })
@Index('ix_background_commands_session', ['sessionId', 'startedAt'])
@Index('ix_background_commands_running', ['leaseExpiresAt'], { where: "status = 'running'" })
export class BackgroundCommandEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_background_commands' })
  id!: string;

  @Column({ name: 'session_id', type: 'uuid' })
  sessionId!: string;

  @ManyToOne(() => SessionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id', foreignKeyConstraintName: 'fk_background_commands_session' })
  session?: SessionEntity;

  /** The key that owns its session. */
  @Column({ type: 'text' })
  owner!: string;

  @Column({ type: 'text' })
  command!: string;

  /** `running`, `exited` or `stopped`. */
  @Column({ type: 'text', default: 'running' })
  status!: string;

  @Column({ name: 'exit_code', type: 'int', nullable: true })
  exitCode!: number | null;

  /** What stopped it: `cancelled`, `timeout`, `limit`, `session` or `process`. */
  @Column({ name: 'stop_reason', type: 'text', nullable: true })
  stopReason!: string | null;

  /** The server process that runs it (ServerProcess, also its run leases' owner). */
  @Column({ name: 'process_id', type: 'uuid' })
  processId!: string;

  @Column({ name: 'lease_expires_at', type: 'timestamptz' })
  leaseExpiresAt!: Date;

  @Column({ name: 'started_at', type: 'timestamptz', default: () => 'now()' })
  startedAt!: Date;

  @Column({ name: 'ended_at', type: 'timestamptz', nullable: true })
  endedAt!: Date | null;
}
