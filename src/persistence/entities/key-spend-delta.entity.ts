import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * What one stored model call moved on one budget counter (`key_spend`), not added to it yet: its
 * tokens and cost, and the reservation it gave back (negative). The next reservation on the counter
 * folds it in, under the counter's lock, before it decides (`fold_spend`, migration 1797860000000);
 * until then the counter still holds the call's whole reservation instead of its spend.
 */
@Entity({ name: 'key_spend_deltas' })
@Index('ix_key_spend_deltas_counter', ['owner', 'windowKind', 'windowStart'])
export class KeySpendDeltaEntity {
  @PrimaryGeneratedColumn('increment', { type: 'bigint', primaryKeyConstraintName: 'pk_key_spend_deltas' })
  id!: string;

  @Column({ type: 'text' })
  owner!: string;

  @Column({ name: 'window_kind', type: 'text' })
  windowKind!: string;

  @Column({ name: 'window_start', type: 'timestamptz' })
  windowStart!: Date;

  @Column({ type: 'bigint' })
  tokens!: string;

  @Column({ name: 'cost_usd', type: 'double precision' })
  costUsd!: number;

  @Column({ name: 'reserved_tokens', type: 'bigint' })
  reservedTokens!: string;

  @Column({ name: 'reserved_usd', type: 'numeric' })
  reservedUsd!: string;
}
