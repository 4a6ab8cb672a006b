/**
 * Costs a schema can put on every validation besides its patterns (those are linear, see
 * linear-regexp.ts): very deep nesting (ajv's compiler and the generated code recurse per level), a
 * huge number of subschemas, and `uniqueItems` on an unbounded array (ajv compares items pairwise:
 * quadratic in the array's length). Walked iteratively, so a deep schema cannot overflow the stack here.
 */
export const SCHEMA_MAX_DEPTH = 64;
export const SCHEMA_MAX_NODES = 10_000;
export const UNIQUE_ITEMS_MAX = 1_000;

export function schemaBoundsProblem(schema: unknown): string | null {
  const stack: { value: unknown; depth: number }[] = [{ value: schema, depth: 0 }];
  let nodes = 0;
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (++nodes > SCHEMA_MAX_NODES) return `the schema has more than ${SCHEMA_MAX_NODES} parts`;
    if (depth > SCHEMA_MAX_DEPTH) return `the schema nests deeper than ${SCHEMA_MAX_DEPTH} levels`;
    if (!Array.isArray(value)) {
      const record = value as Record<string, unknown>;
      if (record.uniqueItems === true) {
        const max = record.maxItems;
        if (typeof max !== 'number' || max > UNIQUE_ITEMS_MAX) {
          return `"uniqueItems" needs "maxItems" of at most ${UNIQUE_ITEMS_MAX} beside it (checking it is quadratic in the array's length)`;
        }
      }
    }
    for (const child of Object.values(value)) stack.push({ value: child, depth: depth + 1 });
  }
  return null;
}
