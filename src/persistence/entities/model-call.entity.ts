import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One model call's usage and cost, written in the statement that stores its step. Kept apart from
 * `runs` (no foreign key, no cascade): deleting a session does not erase what its key spent.
 */
@Entity({ name: 'model_calls' })
// GET /v1/usage reads one key's calls over a time range: a range scan of this index, however long the history.
@Index('ix_model_calls_owner_created', ['owner', 'createdAt'])
// An admin's usage over every key reads a time range alone.
@Index('ix_model_calls_created', ['createdAt'])
export class ModelCallEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_model_calls' })
  id!: string;

  /** Null for a call made for the session outside any run (an on-demand summary). */
  @Column({ name: 'run_id', type: 'uuid', nullable: true })
  runId!: string | null;

  @Column({ name: 'session_id', type: 'uuid' })
  sessionId!: string;

  /** The key that ran it. */
  @Column({ type: 'text' })
  owner!: string;

  @Column({ type: 'int' })
  iteration!: number;

  @Column({ type: 'text' })
  provider!: string;

  /** `provider/model`: the model that answered. */
  @Column({ type: 'text' })
  model!: string;

  @Column({ name: 'prompt_tokens', type: 'int' })
  promptTokens!: number;

  @Column({ name: 'completion_tokens', type: 'int' })
  completionTokens!: number;

  @Column({ name: 'cache_read_tokens', type: 'int', default: 0 })
  cacheReadTokens!: number;

  @Column({ name: 'cache_write_tokens', type: 'int', default: 0 })
  cacheWriteTokens!: number;

  @Column({ name: 'reasoning_tokens', type: 'int', default: 0 })
  reasoningTokens!: number;

  /** USD; null when the model has no price. */
  @Column({ name: 'cost_usd', type: 'double precision', nullable: true })
  costUsd!: number | null;

  /** Its tokens were estimated (in whole or part): the provider reported none or only part. */
  @Column({ type: 'boolean', default: false })
  estimated!: boolean;

  /** The end user of its session, when it has one (GET /v1/usage groupBy=endUser). */
  @Column({ name: 'end_user', type: 'text', nullable: true })
  endUser!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
