import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { WebhookEntity } from './webhook.entity';

/**
 * The outbox: one event owed to one webhook, inserted in the statement that stores the run's state
 * (store/webhook-outbox.ts), delivered at least once by whichever process claims it. Its id is the
 * `webhook-id` of every attempt. Delivered, it is deleted; given up, it is kept for
 * WEBHOOK_RETENTION_HOURS (WebhookStore.prune).
 */
@Entity({ name: 'webhook_deliveries' })
// What is due: the deliverer's claim reads only rows not yet done.
@Index('ix_webhook_deliveries_due', ['nextAttemptAt'], { where: 'done_at IS NULL' })
@Index('ix_webhook_deliveries_webhook', ['webhookId'])
// The pruning reads events given up longer ago than the retention.
@Index('ix_webhook_deliveries_done', ['doneAt'], { where: 'done_at IS NOT NULL' })
export class WebhookDeliveryEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_webhook_deliveries' })
  id!: string;

  @Column({ name: 'webhook_id', type: 'uuid' })
  webhookId!: string;

  @ManyToOne(() => WebhookEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'webhook_id', foreignKeyConstraintName: 'fk_webhook_deliveries_webhook' })
  webhook?: WebhookEntity;

  /** The run the event is about (no foreign key: an owed event outlives a deleted session). */
  @Column({ name: 'run_id', type: 'uuid' })
  runId!: string;

  @Column({ type: 'text' })
  type!: string;

  /** The body's `data`, as of the event. */
  @Column({ type: 'jsonb' })
  data!: unknown;

  /** When the event happened: the body's `timestamp`; attempts stop 24 hours after it. */
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', default: () => 'now()' })
  nextAttemptAt!: Date;

  @Column({ type: 'int', default: 0 })
  attempts!: number;

  /** The process whose attempt is under way, until `lease_expires_at`; then any process may try again. */
  @Column({ name: 'lease_owner', type: 'text', nullable: true })
  leaseOwner!: string | null;

  @Column({ name: 'lease_expires_at', type: 'timestamptz', nullable: true })
  leaseExpiresAt!: Date | null;

  /** Given up after 24 hours (a row delivered before the rows were pruned, too); null while owed. */
  @Column({ name: 'done_at', type: 'timestamptz', nullable: true })
  doneAt!: Date | null;
}
