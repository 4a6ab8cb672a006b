import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * What a key — or one end user of a key, `owner` `<key>/<end user>` — spent in one budget window
 * (BUDGETS), moved by the statement that stores each model call's step, and what the calls in flight
 * have reserved: the counter every reservation before a model call reads (one row, not a sum of calls).
 * A run's own limits (`maxTokens`, `maxCostUsd`) are a counter too: `run/<run id>`, window `run`.
 */
@Entity({ name: 'key_spend' })
@Index('ix_key_spend_runs', ['owner'], { where: "window_kind = 'run'" })
export class KeySpendEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'pk_key_spend' })
  owner!: string;

  /** `hour`, `day` or `month` (UTC); `run` for a run's own limits (one window, starting at the epoch). */
  @PrimaryColumn({ name: 'window_kind', type: 'text', primaryKeyConstraintName: 'pk_key_spend' })
  windowKind!: string;

  @PrimaryColumn({ name: 'window_start', type: 'timestamptz', primaryKeyConstraintName: 'pk_key_spend' })
  windowStart!: Date;

  /** Prompt + completion tokens. */
  @Column({ type: 'bigint', default: 0 })
  tokens!: string;

  @Column({ name: 'cost_usd', type: 'double precision', default: 0 })
  costUsd!: number;

  /** Prompt + maximum output tokens of the calls in flight (budget_reservations). */
  @Column({ name: 'reserved_tokens', type: 'bigint', default: 0 })
  reservedTokens!: string;

  /** Their maximum cost. */
  @Column({ name: 'reserved_usd', type: 'numeric', default: 0 })
  reservedUsd!: string;
}
