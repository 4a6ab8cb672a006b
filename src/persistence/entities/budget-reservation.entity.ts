import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * What one run's model call in flight holds of one budget counter (`key_spend`): its prompt and
 * maximum output, in tokens and USD. Given back by the statement that stores the call's usage, by
 * the run's end, or by the take-over of a run whose process died (its lease expired); one whose
 * holder is no run (a start's first call, an on-demand summary) by its own statements, or once it
 * is old (BudgetStore.releaseOrphans) when their process died.
 */
@Entity({ name: 'budget_reservations' })
export class BudgetReservationEntity {
  @PrimaryColumn({ name: 'run_id', type: 'uuid', primaryKeyConstraintName: 'pk_budget_reservations' })
  runId!: string;

  /** The counter's owner: a key, or `<key>/<end user>`. */
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'pk_budget_reservations' })
  counter!: string;

  @PrimaryColumn({ name: 'window_kind', type: 'text', primaryKeyConstraintName: 'pk_budget_reservations' })
  windowKind!: string;

  @PrimaryColumn({
    name: 'window_start',
    type: 'timestamptz',
    primaryKeyConstraintName: 'pk_budget_reservations',
  })
  windowStart!: Date;

  /** The key whose run holds it. */
  @Column({ type: 'text' })
  owner!: string;

  @Column({ type: 'bigint' })
  tokens!: string;

  @Column({ name: 'cost_usd', type: 'numeric' })
  costUsd!: string;

  /** When it was made: one no run holds is given back once older than any such call lasts. */
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
