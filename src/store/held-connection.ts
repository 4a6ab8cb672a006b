import type { DataSource, QueryRunner } from 'typeorm';
import type { Queryable } from './store-sql';
import { isStoreUnavailable } from './store-errors';

/** What a group-commit stream writes through: statements, and `release` once none waits. */
export interface BatchConnection extends Queryable {
  release(): void;
}

/**
 * A pooled connection a group-commit stream (GroupCommit) keeps while its statements follow one
 * another, and gives back once none waits: under load its statements never queue for a connection
 * behind the pool's others — the text a stream waits for, the reservation a model call waits for —
 * and idle it holds nothing. A connection that failed is given back, and replaced at the next
 * statement.
 */
export class HeldConnection implements BatchConnection {
  private runner: QueryRunner | null = null;

  constructor(private readonly db: DataSource) {}

  async query<T>(sql: string, params?: unknown[]): Promise<T> {
    if (this.runner === null || this.runner.isReleased) this.runner = this.db.createQueryRunner();
    const runner = this.runner;
    try {
      return (await runner.query(sql, params)) as T;
    } catch (err) {
      // A connection the database dropped goes back to the pool (which discards it): never kept.
      if (isStoreUnavailable(err) && this.runner === runner) this.release();
      throw err;
    }
  }

  /** Gives the connection back to the pool; the next statement takes one again. */
  release(): void {
    const runner = this.runner;
    this.runner = null;
    if (runner !== null && !runner.isReleased) runner.release().catch(() => undefined);
  }
}
