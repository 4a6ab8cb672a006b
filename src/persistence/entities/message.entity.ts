import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { SessionEntity } from './session.entity';

export type MessageRole = 'system' | 'user' | 'assistant' | 'tool';

/** What the model gets of a message it no longer gets in full ("Long sessions"); null: all of it. */
export type MessageContextMark = 'pruned' | 'summarized';

/** The span of messages a summary stands in for (ids of the first and the last). */
export interface SummarizedSpan {
  fromId: string;
  toId: string;
}

/**
 * A part of a user message whose prompt came as parts ("Attachments"): its text, or a reference to
 * a file (never its bytes) with the name and type it had when it was sent.
 */
export type StoredMessagePart =
  | { type: 'text'; text: string }
  | {
      type: 'file';
      fileId: string;
      name: string;
      mediaType: string;
      /** Bytes, and an image's pixels: what the context window counts it by (not shown to clients). */
      size?: number;
      width?: number | null;
      height?: number | null;
    };

export interface StoredToolCall {
  id: string;
  name: string;
  /** The model's arguments as it wrote them (JSON text). */
  arguments: string;
  /** Provider data that must be sent back with the call (e.g. Gemini's thought signature). */
  extraContent?: Record<string, unknown>;
}

@Entity({ name: 'messages' })
@Index('uq_messages_session_seq', ['sessionId', 'seq'], { unique: true })
@Index('idx_messages_run', ['runId'])
export class MessageEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_messages' })
  id!: string;

  @Column({ name: 'session_id', type: 'uuid' })
  sessionId!: string;

  @ManyToOne(() => SessionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id', foreignKeyConstraintName: 'fk_messages_session' })
  session?: SessionEntity;

  /** Its place in the session; a summary takes x.5, between the span it summarizes and what follows. */
  @Column({ type: 'double precision' })
  seq!: number;

  @Column({ type: 'text' })
  role!: MessageRole;

  @Column({ type: 'text', nullable: true })
  content!: string | null;

  @Column({ name: 'tool_calls', type: 'jsonb', nullable: true })
  toolCalls!: StoredToolCall[] | null;

  /** The reasoning the model showed with this (assistant) message, never its content. */
  @Column({ type: 'text', nullable: true })
  reasoning!: string | null;

  /** What the provider that wrote this message needs back on later calls (llm's ProviderData). */
  @Column({ name: 'provider_data', type: 'jsonb', nullable: true })
  providerData!: { provider: string; items: unknown[] } | null;

  /**
   * A user message's parts, in order, when its prompt had a file (a tool message's when its result
   * carries one: read_file of an image or PDF); null: its content is all of it.
   */
  @Column({ type: 'jsonb', nullable: true })
  parts!: StoredMessagePart[] | null;

  @Column({ name: 'tool_call_id', type: 'text', nullable: true })
  toolCallId!: string | null;

  @Column({ type: 'text', nullable: true })
  context!: MessageContextMark | null;

  /** `summary` for a summary of older messages (role `system`). */
  @Column({ type: 'text', nullable: true })
  kind!: 'summary' | null;

  @Column({ type: 'jsonb', nullable: true })
  summarizes!: SummarizedSpan | null;

  @Column({ name: 'run_id', type: 'uuid', nullable: true })
  runId!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
