import type { EntityManager } from 'typeorm';

/**
 * What every store shares to speak SQL: where a statement runs, a statement handed to another
 * store's write (RunStore.writeWithEvents puts it in its own), and reading TypeORM's answers.
 * Hand-written SQL, not the entity manager: on the hot path TypeORM's save costs a round trip per row.
 */

/** Anything that can run a query: the data source or a transaction's manager. */
export type Queryable = Pick<EntityManager, 'query'>;

/** One SQL statement with its parameters ($1 … in its own numbering). */
export interface SqlStatement {
  sql: string;
  params: unknown[];
}

/** Moves a statement's $n placeholders after `offset` parameters that come before it. */
export function renumber(sql: string, offset: number): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
}

/** TypeORM answers UPDATE/DELETE … RETURNING with `[rows, affectedCount]` on PostgreSQL. */
export function returningRows<T>(result: unknown): T[] {
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}
