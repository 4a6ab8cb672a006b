import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A key's webhook ("Schedules and webhooks"): where its runs' events are posted and the secret
 * they are signed with. The secret is read only by the deliverer (never listed, logged or traced).
 */
@Entity({ name: 'webhooks' })
// The journal's outbox write looks a run's key up here when the run ends or waits (webhook-outbox.ts).
@Index('ix_webhooks_owner', ['owner'])
export class WebhookEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_webhooks' })
  id!: string;

  /** The key name that created it. */
  @Column({ type: 'text' })
  owner!: string;

  /** The end user (`X-End-User`) it was created for, or null: who may list and delete it. */
  @Column({ name: 'end_user', type: 'text', nullable: true })
  endUser!: string | null;

  @Column({ type: 'text' })
  url!: string;

  /** Event types (`run.completed` …) or `*`. */
  @Column({ type: 'text', array: true })
  events!: string[];

  /** As given (`whsec_` + base64, or any text used as its UTF-8 bytes). */
  @Column({ type: 'text' })
  secret!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
