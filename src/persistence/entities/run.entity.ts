import type { ResponseFormat } from '../../common/response-format';
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

export type RunStatus =
  | 'queued'
  | 'running'
  | 'requires_action'
  | 'completed'
  | 'max_iterations'
  | 'cancelled'
  | 'budget_exceeded'
  | 'failed';

export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['running', 'requires_action'];

/** What a replayed run replays ("Fork and replay"): `of` the run, its steps 1…`steps` recorded (null: all). */
export interface RunReplay {
  of: string;
  steps: number | null;
}

export interface RunError {
  code: string;
  message: string;
  retryable: boolean;
}

@Entity({ name: 'runs' })
// One active run per session, enforced by the database across every replica.
@Index('uq_runs_one_active_per_session', ['sessionId'], {
  unique: true,
  where: "status IN ('running', 'requires_action')",
})
@Index('idx_runs_owner_created', ['owner', 'createdAt'])
// A key's active runs, counted at every start (MAX_ACTIVE_RUNS_PER_KEY) without reading its history.
@Index('idx_runs_owner_active', ['owner'], { where: "status IN ('running', 'requires_action')" })
@Index('idx_runs_active_lease', ['leaseExpiresAt'], { where: "status = 'running'" })
// A session's queue, oldest first ("Messages while a run is active").
@Index('idx_runs_queued', ['sessionId', 'queuedAt', 'createdAt'], { where: "status = 'queued'" })
export class RunEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_runs' })
  id!: string;

  @Column({ name: 'session_id', type: 'uuid' })
  sessionId!: string;

  @ManyToOne(() => SessionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id', foreignKeyConstraintName: 'fk_runs_session' })
  session?: SessionEntity;

  @Column({ type: 'text' })
  owner!: string;

  @Column({ type: 'text' })
  status!: RunStatus;

  @Column({ type: 'text' })
  model!: string;

  @Column({ name: 'max_iterations', type: 'int' })
  maxIterations!: number;

  /** Model calls made so far. */
  @Column({ type: 'int', default: 0 })
  iterations!: number;

  @Column({ name: 'prompt_tokens', type: 'int', default: 0 })
  promptTokens!: number;

  @Column({ name: 'completion_tokens', type: 'int', default: 0 })
  completionTokens!: number;

  @Column({ name: 'cache_read_tokens', type: 'int', default: 0 })
  cacheReadTokens!: number;

  @Column({ name: 'cache_write_tokens', type: 'int', default: 0 })
  cacheWriteTokens!: number;

  @Column({ name: 'reasoning_tokens', type: 'int', default: 0 })
  reasoningTokens!: number;

  /** Some of the run's usage was estimated (a call the provider did not report in full). */
  @Column({ name: 'usage_estimated', type: 'boolean', default: false })
  usageEstimated!: boolean;

  /** USD of the run's priced model calls; null while none had a price. */
  @Column({ name: 'cost_usd', type: 'double precision', nullable: true })
  costUsd!: number | null;

  /**
   * The W3C `traceparent` of the run's first `invoke_agent` span: whoever drives the run later (after
   * a wait, or a take-over) continues the same trace under it. Null when tracing is off.
   */
  @Column({ name: 'trace_parent', type: 'text', nullable: true })
  traceParent!: string | null;

  @Column({ type: 'jsonb', nullable: true })
  error!: RunError | null;

  /** A replayed run: the run it replays, and how many of its steps come from the record (null: all). */
  @Column({ type: 'jsonb', nullable: true })
  replay!: RunReplay | null;

  /** The last event number stored for this run. */
  @Column({ name: 'last_seq', type: 'int', default: 0 })
  lastSeq!: number;

  /** The stored final assistant message (`done.messageId`). */
  @Column({ name: 'final_message_id', type: 'uuid', nullable: true })
  finalMessageId!: string | null;

  /** The process driving the run while it is `running`, and until when its lease holds. */
  @Column({ name: 'lease_owner', type: 'text', nullable: true })
  leaseOwner!: string | null;

  @Column({ name: 'lease_expires_at', type: 'timestamptz', nullable: true })
  leaseExpiresAt!: Date | null;

  /** How often a process took the run over after its own one died or shut down (RUN_MAX_RESUMES). */
  @Column({ type: 'int', default: 0 })
  resumes!: number;

  /** A queued run's prompt, until it starts (then it is a message of the session, and this is null). */
  @Column({ name: 'queued_prompt', type: 'text', nullable: true })
  queuedPrompt!: string | null;

  /** Orders a session's queued runs (an interrupt's goes first); null for a run never queued. */
  @Column({ name: 'queued_at', type: 'timestamptz', nullable: true })
  queuedAt!: Date | null;

  /** What the final answer must be: the prompt's responseFormat, else the session's; null: free text. */
  @Column({ name: 'response_format', type: 'jsonb', nullable: true })
  responseFormat!: ResponseFormat | null;

  /** Answers sent back to the model because they did not match `responseFormat` (at most one). */
  @Column({ name: 'output_corrections', type: 'int', default: 0 })
  outputCorrections!: number;

  @Column({ name: 'cancel_requested', type: 'boolean', default: false })
  cancelRequested!: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt!: Date | null;

  /** The run that answered this run's prompt again (regenerate): this run's answer left the conversation. */
  @Column({ name: 'superseded_by', type: 'uuid', nullable: true })
  supersededBy!: string | null;
}
