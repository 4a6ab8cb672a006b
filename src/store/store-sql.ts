import type { EntityManager } from 'typeorm';

/**
 * What every store shares to speak SQL: where a statement runs, its parts as
 * CTEs of one statement, and reading TypeORM's answers.
 * Hand-written SQL, not the entity manager: on the hot path TypeORM's save costs a round trip per row.
 */

/** Anything that can run a query: the data source or a transaction's manager. */
export type Queryable = Pick<EntityManager, 'query'>;

/** One SQL statement with its parameters (a statement a test reads, e.g. UsageStore.usageSql). */
export interface SqlStatement {
  sql: string;
  params: unknown[];
}

/**
 * Statements as data-modifying CTEs of one statement ending in `last` (one round trip, atomic on
 * its own; PostgreSQL runs every CTE whether or not `last` reads it). `lastName`: the name of the
 * last CTE, for `last` to read (the others are w0, w1 …).
 */
export function withCtes(statements: readonly string[], last: string, lastName?: string): string {
  if (statements.length === 0) return last;
  const names = statements.map((_, i) => (i === statements.length - 1 && lastName ? lastName : `w${i}`));
  return `WITH ${statements.map((s, i) => `${names[i]} AS (${s})`).join(',\n')}\n${last}`;
}

/** TypeORM answers UPDATE/DELETE … RETURNING with `[rows, affectedCount]` on PostgreSQL. */
export function returningRows<T>(result: unknown): T[] {
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}
