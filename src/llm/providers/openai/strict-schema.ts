/**
 * Keywords OpenAI's strict structured outputs refuse (its "supported schemas" list): a schema with
 * one of them goes without `strict`.
 */
const NOT_IN_STRICT = new Set([
  'patternProperties',
  'unevaluatedProperties',
  'propertyNames',
  'dependentRequired',
  'dependentSchemas',
  'if',
  'then',
  'else',
  'not',
]);

/**
 * Whether OpenAI takes `schema` with `strict: true` (Chat Completions' `json_schema.strict`, the
 * Responses API's `text.format.strict`): every object closed (`additionalProperties: false`) with
 * all its properties required, and none of the keywords strict mode refuses. A schema that does
 * not qualify is sent without `strict` (the API refuses it otherwise); the server's own check of the
 * answer holds it to the schema either way. Walked iteratively, so a deep schema cannot overflow.
 */
export function qualifiesForStrict(schema: Record<string, unknown>): boolean {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      stack.push(...(node as unknown[]));
      continue;
    }
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) if (NOT_IN_STRICT.has(key)) return false;
    const properties = record.properties;
    const isObject = record.type === 'object' || (typeof properties === 'object' && properties !== null);
    if (isObject) {
      if (record.additionalProperties !== false) return false;
      const names = typeof properties === 'object' && properties !== null ? Object.keys(properties) : [];
      const required = Array.isArray(record.required) ? new Set(record.required) : new Set<unknown>();
      if (names.some((n) => !required.has(n))) return false;
    }
    // The subschemas (a `properties` map's values are schemas, its keys are names).
    for (const [key, value] of Object.entries(record)) {
      if (key === 'properties' || key === '$defs' || key === 'definitions') {
        if (typeof value === 'object' && value !== null)
          stack.push(...Object.values(value as Record<string, unknown>));
      } else if (typeof value === 'object' && value !== null && key !== 'enum' && key !== 'const') {
        stack.push(value);
      }
    }
  }
  return true;
}
