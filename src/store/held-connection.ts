import type { DataSource, QueryRunner } from 'typeorm';
import type { Queryable } from './store-sql';

/** What a group-commit stream writes through: statements, and `release` once none waits. */
export interface BatchConnection extends Queryable {
  release(): void;
}

/**
 * A pooled connection a group-commit stream (GroupCommit) keeps while its statements follow one
 * another, and gives back once none waits: under load its statements never queue for a connection
 * behind the pool's others — the text a stream waits for, the reservation a model call waits for —
 * and idle it holds nothing. A connection the pool dropped (an error on it) is replaced at the next
 * statement.
 */
export class HeldConnection implements BatchConnection {
  private runner: QueryRunner | null = null;

  constructor(private readonly db: DataSource) {}

  query<T>(sql: string, params?: unknown[]): Promise<T> {
    if (this.runner === null || this.runner.isReleased) this.runner = this.db.createQueryRunner();
    return this.runner.query(sql, params) as Promise<T>;
  }

  /** Gives the connection back to the pool; the next statement takes one again. */
  release(): void {
    const runner = this.runner;
    this.runner = null;
    if (runner !== null && !runner.isReleased) runner.release().catch(() => undefined);
  }
}
