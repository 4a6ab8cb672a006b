import { AsyncLocalStorage } from 'node:async_hooks';
import * as pg from 'pg';

const ahead = new AsyncLocalStorage<true>();

/**
 * Runs `work` with its statements ahead in the line for a pooled connection. For what admits a run
 * — its start and its calls' reservations — which a person is waiting on, while the statements
 * that record what already happened (a step, a result, a run's end) can wait their turn: under a
 * burst every connection is busy and a statement waited longer for one than it ran. Statements
 * ahead keep their order among themselves.
 */
export function aheadInLine<T>(work: () => Promise<T>): Promise<T> {
  return ahead.run(true, work);
}

type Done = (release?: unknown) => void;
type Connected = (err: Error | undefined, client: pg.PoolClient | undefined, done: Done) => void;

/**
 * The pool, with a line of its own in front: it hands out at most `max` connections at a time, so
 * pg-pool never queues a caller, and serves its waiting callers `aheadInLine`'s first, each group in
 * its order. Only pg-pool's public surface is used: `connect` and the release it hands out.
 */
export class PriorityPool extends pg.Pool {
  private readonly size: number;
  /** Connections handed out, or being made, through the line. */
  private out = 0;
  private readonly line: { ahead: boolean; go: () => void }[] = [];

  constructor(options?: pg.PoolConfig) {
    super(options);
    this.size = options?.max ?? 10;
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: Connected): void;
  override connect(callback?: Connected): Promise<pg.PoolClient> | void {
    if (callback === undefined) {
      return new Promise((resolve, reject) =>
        this.connect((err, client) =>
          err || !client ? reject(err ?? new Error('the pool gave no connection')) : resolve(client),
        ),
      );
    }
    this.whenFree(ahead.getStore() === true, () =>
      super.connect((err, client, done) => {
        if (err || !client) {
          this.freed();
          callback(err, client, done);
          return;
        }
        let returned = false;
        const release: Done = (how) => {
          const first = !returned;
          returned = true;
          try {
            done(how);
          } finally {
            if (first) this.freed();
          }
        };
        client.release = release;
        callback(undefined, client, release);
      }),
    );
  }

  private whenFree(isAhead: boolean, go: () => void): void {
    if (this.out < this.size) {
      this.out++;
      go();
      return;
    }
    let at = this.line.length;
    if (isAhead) {
      at = 0;
      while (at < this.line.length && this.line[at].ahead) at++;
    }
    this.line.splice(at, 0, { ahead: isAhead, go });
  }

  /** A connection came back (or was never made): the next in line gets it. */
  private freed(): void {
    this.out--;
    const next = this.line.shift();
    if (next === undefined) return;
    this.out++;
    next.go();
  }
}

/** The `pg` module as TypeORM loads it (its `driver` option), with the pool above. */
export const PRIORITY_PG = { ...pg, Pool: PriorityPool };
