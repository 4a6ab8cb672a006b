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
import type { SessionMode } from '../../config/app-config';

export interface ClientToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

@Entity({ name: 'sessions' })
@Index('idx_sessions_owner_created', ['owner', 'createdAt', 'id'])
@Index('uq_sessions_owner_chat', ['owner', 'chatId'], { unique: true, where: 'chat_id IS NOT NULL' })
@Index('uq_sessions_parent_call', ['parentRunId', 'parentCallId'], {
  unique: true,
  where: 'parent_run_id IS NOT NULL',
})
@Index('idx_sessions_parent_session', ['parentSessionId'], { where: 'parent_session_id IS NOT NULL' })
export class SessionEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_sessions' })
  id!: string;

  @Column({ type: 'text' })
  owner!: string;

  /** The frontend protocols' chat (AI SDK) or thread (AG-UI) id naming this session; unique per owner. */
  @Column({ name: 'chat_id', type: 'text', nullable: true })
  chatId!: string | null;

  @Column({ type: 'text', nullable: true })
  title!: string | null;

  @Column({ name: 'system_prompt', type: 'text', nullable: true })
  systemPrompt!: string | null;

  @Column({ type: 'text', nullable: true })
  model!: string | null;

  @Column({ type: 'text', default: 'safe' })
  mode!: SessionMode;

  /** Names of server tools this session may use; null = all the mode allows. */
  @Column({ type: 'jsonb', nullable: true })
  tools!: string[] | null;

  @Column({ name: 'client_tools', type: 'jsonb', default: () => "'[]'" })
  clientTools!: ClientToolDefinition[];

  @Column({ name: 'max_iterations', type: 'int', nullable: true })
  maxIterations!: number | null;

  /** The most tokens (prompt + completion) one run of the session may use; null = no limit. */
  @Column({ name: 'max_tokens', type: 'int', nullable: true })
  maxTokens!: number | null;

  /** The most USD one run of the session may spend; null = no limit. */
  @Column({ name: 'max_cost_usd', type: 'double precision', nullable: true })
  maxCostUsd!: number | null;

  /** The end user (X-End-User or `endUser`) the session belongs to besides its key; null: the key's alone. */
  @Column({ name: 'end_user', type: 'text', nullable: true })
  endUser!: string | null;

  /** `off`, `low`, `medium`, `high`; null: LLM_REASONING. */
  @Column({ type: 'text', nullable: true })
  reasoning!: string | null;

  /** What every run's final answer must be (Structured output); null: free text. */
  @Column({ name: 'response_format', type: 'jsonb', nullable: true })
  responseFormat!: ResponseFormat | null;

  /** The next message's position in the session; messages are ordered by it. */
  @Column({ name: 'next_message_seq', type: 'int', default: 1 })
  nextMessageSeq!: number;

  /** The on-demand compaction under way, if any (store/compaction-claim.ts), and until when it holds. */
  @Column({ name: 'compaction_claim', type: 'uuid', nullable: true })
  compactionClaim!: string | null;

  @Column({ name: 'compaction_claimed_until', type: 'timestamptz', nullable: true })
  compactionClaimedUntil!: Date | null;

  /** A child session (a `delegate` call's): its parent session, deleted with it. */
  @Column({ name: 'parent_session_id', type: 'uuid', nullable: true })
  parentSessionId!: string | null;

  @ManyToOne(() => SessionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'parent_session_id', foreignKeyConstraintName: 'fk_sessions_parent_session' })
  parentSession?: SessionEntity;

  /** The run whose `delegate` call (`parent_call_id`, its call id in that run) this child session answers. */
  @Column({ name: 'parent_run_id', type: 'uuid', nullable: true })
  parentRunId!: string | null;

  @Column({ name: 'parent_call_id', type: 'text', nullable: true })
  parentCallId!: string | null;

  /** A child session's root: the client's session (its workspace is the child's) and run. */
  @Column({ name: 'root_session_id', type: 'uuid', nullable: true })
  rootSessionId!: string | null;

  @Column({ name: 'root_run_id', type: 'uuid', nullable: true })
  rootRunId!: string | null;

  /** The named agent (AGENTS_CONFIG) the session started from, if any. */
  @Column({ type: 'text', nullable: true })
  agent!: string | null;

  /** Levels of delegation below the client's run: 0 for a client's session. */
  @Column({ type: 'int', default: 0 })
  depth!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
