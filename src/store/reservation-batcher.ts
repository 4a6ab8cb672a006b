import { isStoreUnavailable } from './store-errors';
import type { Queryable } from './store-sql';

/** One reservation, as `reserve_budget` takes it (BudgetStore.reserve); every one goes through `reserve_budgets`, which folds the counters' spend in first. */
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
  /** What `run` holds is given back first (rereserve_budget). */
  replacing: boolean;
}

/** One reservation waiting for the next shared statement. */
interface PendingReservation {
  args: ReservationArgs;
  resolve: (granted: number) => void;
  reject: (err: unknown) => void;
}

/**
 * The reservations of this process, made together (group commit, as EventAppendBatcher writes text):
 * while one statement is in flight the next reservations wait, then leave as one — `reserve_budgets`,
 * which locks their counters once. At low load a reservation leaves at once, alone. Every run of a
 * key reserves on the key's one counter row, locked by each reservation until it commits: under a
 * burst, one lock per batch instead of one per call. A batch that fails is made again reservation by
 * reservation, so one reservation's error stays its own.
 */
export class ReservationBatcher {
  private pending: PendingReservation[] = [];
  private inFlight = false;

  constructor(private readonly q: Queryable) {}

  /** The output tokens granted, or reserve_budget's refusal (-1: wait, -2: spent). */
  reserve(args: ReservationArgs): Promise<number> {
    return new Promise((resolve, reject) => {
      this.pending.push({ args, resolve, reject });
      if (!this.inFlight) {
        this.inFlight = true;
        // Reservations asked by the code running now join the first statement; later ones, the next.
        queueMicrotask(() => void this.makeNext());
      }
    });
  }

  private async makeNext(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    try {
      if (batch.length === 1) await this.alone(batch[0]);
      else await this.together(batch);
    } finally {
      if (this.pending.length > 0) void this.makeNext();
      else this.inFlight = false;
    }
  }

  private async alone(p: PendingReservation): Promise<void> {
    try {
      const rows: { granted: number }[] = await this.q.query(
        `SELECT granted FROM reserve_budgets($1::jsonb)`,
        [JSON.stringify([p.args])],
      );
      p.resolve(rows[0].granted);
    } catch (err) {
      p.reject(err);
    }
  }

  private async together(batch: PendingReservation[]): Promise<void> {
    let rows: { place: number; granted: number }[];
    try {
      rows = await this.q.query(`SELECT place, granted FROM reserve_budgets($1::jsonb)`, [
        JSON.stringify(batch.map((p) => p.args)),
      ]);
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
