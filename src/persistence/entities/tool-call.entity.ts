import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import type { FileChange } from '../../common/file-change';
import { MessageEntity } from './message.entity';
import { RunEntity } from './run.entity';

/**
 * pending → running → completed | error, with the waits in between: pending_approval (a person
 * decides), awaiting_client (the client runs it), awaiting_child (a `delegate` call: its child run
 * answers it when it ends; no deadline), approved (decided, not yet run).
 */
export type ToolCallStatus =
  | 'pending'
  | 'pending_approval'
  | 'approved'
  | 'awaiting_client'
  | 'awaiting_child'
  | 'running'
  | 'completed'
  | 'error';

export const WAITING_TOOL_CALL_STATUSES: readonly ToolCallStatus[] = [
  'pending_approval',
  'awaiting_client',
  'awaiting_child',
];

export interface ToolCallApproval {
  approved: boolean;
  reason: string | null;
  editedArguments: unknown;
  decidedAt: string;
}

@Entity({ name: 'tool_calls' })
@Index('uq_tool_calls_run_call', ['runId', 'callId'], { unique: true })
@Index('idx_tool_calls_message', ['messageId'])
@Index('idx_tool_calls_deadline', ['deadlineAt'], {
  where: "status IN ('pending_approval', 'awaiting_client')",
})
@Index('idx_tool_calls_awaiting_child', ['runId'], { where: "status = 'awaiting_child'" })
export class ToolCallEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_tool_calls' })
  id!: string;

  @Column({ name: 'run_id', type: 'uuid' })
  runId!: string;

  @ManyToOne(() => RunEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'run_id', foreignKeyConstraintName: 'fk_tool_calls_run' })
  run?: RunEntity;

  /** The assistant message that asked for this call. */
  @Column({ name: 'message_id', type: 'uuid' })
  messageId!: string;

  @ManyToOne(() => MessageEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'message_id', foreignKeyConstraintName: 'fk_tool_calls_message' })
  message?: MessageEntity;

  /** The id the model knows the call by (the upstream's, or generated). */
  @Column({ name: 'call_id', type: 'text' })
  callId!: string;

  @Column({ type: 'int' })
  iteration!: number;

  /** Order within its assistant message. */
  @Column({ type: 'int' })
  position!: number;

  @Column({ type: 'text' })
  name!: string;

  @Column({ name: 'raw_arguments', type: 'text' })
  rawArguments!: string;

  /** Parsed arguments; null when the model's text was not a JSON object. */
  @Column({ type: 'jsonb', nullable: true })
  arguments!: unknown;

  @Column({ type: 'text' })
  executor!: 'server' | 'client';

  @Column({ type: 'text' })
  status!: ToolCallStatus;

  /** What the person asked to approve is told (shown again in `GET /v1/runs/:id`). */
  @Column({ name: 'approval_reason', type: 'text', nullable: true })
  approvalReason!: string | null;

  @Column({ type: 'jsonb', nullable: true })
  approval!: ToolCallApproval | null;

  @Column({ type: 'text', nullable: true })
  result!: string | null;

  @Column({ name: 'is_error', type: 'boolean', default: false })
  isError!: boolean;

  @Column({ name: 'error_code', type: 'text', nullable: true })
  errorCode!: string | null;

  @Column({ type: 'boolean', default: false })
  truncated!: boolean;

  @Column({ type: 'jsonb', nullable: true })
  changes!: FileChange[] | null;

  @Column({ name: 'duration_ms', type: 'int', nullable: true })
  durationMs!: number | null;

  /** When a waiting call expires. */
  @Column({ name: 'deadline_at', type: 'timestamptz', nullable: true })
  deadlineAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt!: Date | null;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt!: Date | null;
}
