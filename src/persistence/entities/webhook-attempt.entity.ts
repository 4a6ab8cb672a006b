import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { WebhookDeliveryEntity } from './webhook-delivery.entity';

/** One attempt to deliver an owed event: what `GET /v1/webhooks/:id/deliveries` lists. */
@Entity({ name: 'webhook_attempts' })
@Index('ix_webhook_attempts_webhook_at', ['webhookId', 'at'])
export class WebhookAttemptEntity {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'pk_webhook_attempts' })
  id!: string;

  @Column({ name: 'delivery_id', type: 'uuid' })
  deliveryId!: string;

  @ManyToOne(() => WebhookDeliveryEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'delivery_id', foreignKeyConstraintName: 'fk_webhook_attempts_delivery' })
  delivery?: WebhookDeliveryEntity;

  @Column({ name: 'webhook_id', type: 'uuid' })
  webhookId!: string;

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
