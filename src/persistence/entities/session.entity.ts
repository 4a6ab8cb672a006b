import type { ResponseFormat } from '../../common/response-format';
import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { SessionMode } from '../../config/app-config';

export interface ClientToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

@Entity({ name: 'sessions' })
@Index('idx_sessions_owner_created', ['owner', 'createdAt', 'id'])
@Index('uq_sessions_owner_chat', ['owner', 'chatId'], { unique: true, where: 'chat_id IS NOT NULL' })
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

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
