import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { RunEntity } from './run.entity';

/**
 * An Idempotency-Key a key sent with a request that starts a run, and the run it started: a retry
 * with the same key (on any replica) follows that run instead of starting another. Claimed first in
 * the run's start transaction, so a refused start leaves no key behind and concurrent requests with
 * the same key wait for the first. Live for 24 hours; older rows are pruned as keys are claimed, and
 * a key goes with its run (deleting the session deletes both).
 */
@Entity({ name: 'idempotency_keys' })
@Index('ix_idempotency_keys_owner_created', ['owner', 'createdAt'])
// Deleting a session's runs finds their keys through this.
@Index('ix_idempotency_keys_run', ['runId'])
export class IdempotencyKeyEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'pk_idempotency_keys' })
  owner!: string;

  /** `chat`, or `messages:<session id>`: a key belongs to one endpoint (and session). */
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'pk_idempotency_keys' })
  scope!: string;

  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'pk_idempotency_keys' })
  key!: string;

  /** The request's body as parsed JSON: a retry must send the same. */
  @Column({ type: 'jsonb' })
  request!: unknown;

  @Column({ name: 'run_id', type: 'uuid' })
  runId!: string;

  // Deferred: the key is claimed before the run it names is inserted, in the same transaction.
  @ManyToOne(() => RunEntity, { onDelete: 'CASCADE', deferrable: 'INITIALLY DEFERRED' })
  @JoinColumn({ name: 'run_id', foreignKeyConstraintName: 'fk_idempotency_keys_run' })
  run?: RunEntity;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}
