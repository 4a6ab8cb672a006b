import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * What a key spent in one budget window (BUDGETS), moved by the statement that stores each model
 * call's step: the counter every check before a model call reads (one row, not a sum of calls).
 */
@Entity({ name: 'key_spend' })
export class KeySpendEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'pk_key_spend' })
  owner!: string;

  /** `hour`, `day` or `month` (UTC). */
  @PrimaryColumn({ name: 'window_kind', type: 'text', primaryKeyConstraintName: 'pk_key_spend' })
  windowKind!: string;

  @PrimaryColumn({ name: 'window_start', type: 'timestamptz', primaryKeyConstraintName: 'pk_key_spend' })
  windowStart!: Date;

  /** Prompt + completion tokens. */
  @Column({ type: 'bigint', default: 0 })
  tokens!: string;

  @Column({ name: 'cost_usd', type: 'double precision', default: 0 })
  costUsd!: number;
}
