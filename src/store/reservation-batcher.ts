import { aheadInLine } from '../persistence/priority-pool';
import { isStoreUnavailable } from './store-errors';
import { GroupCommit, type Pending } from './group-commit';
import type { Queryable } from './store-sql';

/**
 * One reservation, as `reserve_budgets` takes each (BudgetStore.reserve): the arguments
 * `reserve_budget` took, and whether it replaces what its holder holds.
 */
export interface ReservationArgs {
  run: string;
  owner: string;
  counters: string[];
  windows: string[];
  units: string[];
  amounts: number[];
  promptTokens: number;
  promptUsd: number;
  outUsd: number;
  maxOut: number;
  minOut: number;
  /** What `run` holds is given back first. */
  replacing: boolean;
}

/**
 * The reservations of this process, made together (GroupCommit, as EventAppendBatcher writes text):
 * while one statement is in flight the next reservations wait, then leave as one — `reserve_budgets`,
 * which locks their counters once. Every run of a key reserves on the key's one counter row, locked
 * by each statement until it commits: under a burst, one lock per batch instead of one per call. A
 * batch that fails is made again reservation by reservation, so one reservation's error stays its own.
 */
export class ReservationBatcher extends GroupCommit<ReservationArgs, number> {
  constructor(private readonly q: Queryable) {
    super();
  }

  /** The output tokens granted, or the refusal (-1: wait, -2: spent). */
  reserve(args: ReservationArgs): Promise<number> {
    return this.add(args);
  }

  protected async alone(p: Pending<ReservationArgs, number>): Promise<void> {
    try {
      const rows: { granted: number }[] = await aheadInLine(() =>
        this.q.query(`SELECT granted FROM reserve_budgets($1::jsonb)`, [JSON.stringify([p.item])]),
      );
      p.resolve(rows[0].granted);
    } catch (err) {
      p.reject(err);
    }
  }

  protected async together(batch: Pending<ReservationArgs, number>[]): Promise<void> {
    let rows: { place: number; granted: number }[];
    try {
      rows = await aheadInLine(() =>
        this.q.query(`SELECT place, granted FROM reserve_budgets($1::jsonb)`, [
          JSON.stringify(batch.map((p) => p.item)),
        ]),
      );
    } catch (err) {
      // The database out of reach: each one's caller hears it. Anything else: each is made alone.
      if (isStoreUnavailable(err)) for (const p of batch) p.reject(err);
      else await Promise.all(batch.map((p) => this.alone(p)));
      return;
    }
    const answered = new Set<number>();
    for (const { place, granted } of rows) {
      answered.add(place);
      batch[place].resolve(granted);
    }
    // Never met: every ask gets its row. Should one be missing, its caller hears it rather than waits.
    batch.forEach((p, place) => {
      if (!answered.has(place)) p.reject(new Error('the reservation batch gave no answer for a reservation'));
    });
  }
}
