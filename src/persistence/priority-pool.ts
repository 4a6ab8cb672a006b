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

/** pg-pool's waiting caller, as it keeps them (`_pendingQueue`, served from the front). */
interface Waiting {
  ahead?: true;
}

/**
 * The pool, with `aheadInLine`'s callers served first when every connection is busy. pg-pool keeps
 * its line as an array it serves from the front, and queues a caller synchronously inside
 * `connect`; a caller ahead is moved behind the others ahead, before everyone else.
 */
export class PriorityPool extends pg.Pool {
  override connect(): Promise<pg.PoolClient>;
  override connect(
    callback: (
      err: Error | undefined,
      client: pg.PoolClient | undefined,
      done: (release?: unknown) => void,
    ) => void,
  ): void;
  override connect(callback?: Parameters<pg.Pool['connect']>[0]): Promise<pg.PoolClient> | void {
    const line = (this as unknown as { _pendingQueue: Waiting[] })._pendingQueue;
    const before = line.length;
    const answer = callback === undefined ? super.connect() : super.connect(callback);
    if (ahead.getStore() === true && line.length === before + 1) {
      const waiting = line.pop()!;
      waiting.ahead = true;
      let at = 0;
      while (at < line.length && line[at].ahead === true) at++;
      line.splice(at, 0, waiting);
    }
    return answer;
  }
}

/** The `pg` module as TypeORM loads it (its `driver` option), with the pool above. */
export const PRIORITY_PG = { ...pg, Pool: PriorityPool };
