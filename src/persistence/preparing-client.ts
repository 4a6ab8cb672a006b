import { createHash } from 'node:crypto';
import { Client, type ClientConfig } from 'pg';

/** Statement texts given a name; past this many, new texts run unnamed (a dynamic SQL bug must not fill PostgreSQL's memory). */
const MAX_NAMED_TEXTS = 512;
const names = new Map<string, string>();

/** The prepared statement name of a text, the same in every connection; null once the cap is reached. */
function statementName(text: string): string | null {
  const known = names.get(text);
  if (known !== undefined) return known;
  if (names.size >= MAX_NAMED_TEXTS) return null;
  const name = `lw_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`;
  names.set(text, name);
  return name;
}

/**
 * The pg client of the pool: every statement with parameters runs as a named prepared statement,
 * so PostgreSQL parses and plans each of the app's statements once per connection instead of at
 * every call — most of the durable core's statements are CTE chains that cost more to plan than to
 * run (docs/decisions/010). Texts are the app's own (values are always parameters), so the set of
 * names is small; DDL and statements without parameters run as before.
 */
export class PreparingClient extends Client {
  constructor(config?: string | ClientConfig) {
    super(config);
    const query = this.query.bind(this) as (...args: unknown[]) => unknown;
    this.query = ((config: unknown, values?: unknown, callback?: unknown) => {
      if (typeof config === 'string' && Array.isArray(values) && values.length > 0) {
        const name = statementName(config);
        if (name !== null) return query({ name, text: config, values }, callback);
      }
      return query(config, values, callback);
    }) as Client['query'];
  }
}
