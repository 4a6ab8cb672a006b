import type { Queryable } from './store-sql';

/**
 * The parameters of one statement as it is built: `p.add(value)` keeps the value and answers its
 * placeholder (`$1`, `$2` …), so a statement built of several stores' parts is numbered as it is
 * written — no part has a numbering of its own to move. SQL texts never carry values (decision 010).
 */
export class Params {
  readonly values: unknown[] = [];

  /** Keeps `value` and answers its placeholder. */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** Builds a statement with its own parameters and runs it. */
export async function runBuilt<T = unknown>(q: Queryable, build: (p: Params) => string): Promise<T> {
  const p = new Params();
  const sql = build(p);
  const result: T = await q.query(sql, p.values);
  return result;
}
