import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { WebhookEntity } from './webhook.entity';

/**
 * One attempt to deliver an owed event: what `GET /v1/webhooks/:id/deliveries` lists. It outlives
 * its event's row (a delivered event's goes at once) and is pruned after WEBHOOK_RETENTION_HOURS.
 */
@Entity({ name: 'webhook_attempts' })
@Index('ix_webhook_attempts_webhook_at', ['webhookId', 'at'])
// The pruning reads attempts older than the retention.
@Index('ix_webhook_attempts_at', ['at'])
export class WebhookAttemptEntity {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'pk_webhook_attempts' })
  id!: string;

  /** The event (its `webhook-id`); no foreign key: a delivered event's row goes at once. */
  @Column({ name: 'delivery_id', type: 'uuid' })
  deliveryId!: string;

  @Column({ name: 'webhook_id', type: 'uuid' })
  webhookId!: string;

  @ManyToOne(() => WebhookEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'webhook_id', foreignKeyConstraintName: 'fk_webhook_attempts_webhook' })
  webhook?: WebhookEntity;

  @Column({ type: 'text' })
  type!: string;

  /** 1, 2, 3 … for one delivery. */
  @Column({ type: 'int' })
  attempt!: number;

  /** The answer's HTTP status; null when none came (refused, unreachable, timed out). */
  @Column({ type: 'int', nullable: true })
  status!: number | null;

  @Column({ type: 'text', nullable: true })
  error!: string | null;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  at!: Date;
}
