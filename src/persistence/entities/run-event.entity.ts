import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { RunEntity } from './run.entity';

/** The run's event log: every event it streamed, so any client can resume from any `seq`. */
@Entity({ name: 'run_events' })
export class RunEventEntity {
  @PrimaryColumn({ name: 'run_id', type: 'uuid', primaryKeyConstraintName: 'pk_run_events' })
  runId!: string;

  @PrimaryColumn({ type: 'int', primaryKeyConstraintName: 'pk_run_events' })
  seq!: number;

  @ManyToOne(() => RunEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'run_id', foreignKeyConstraintName: 'fk_run_events_run' })
  run?: RunEntity;

  @Column({ type: 'text' })
  type!: string;

  @Column({ type: 'jsonb' })
  payload!: unknown;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
