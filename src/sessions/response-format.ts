import { DomainError, ErrorCode } from '../common/domain-error';
import type { ResponseFormat } from '../common/response-format';
import { validateJsonSchema } from '../tools/json-schema';

/** The most bytes a response format's schema may take, as JSON text. */
export const RESPONSE_SCHEMA_MAX_BYTES = 64 * 1024;

/** What providers accept as a format's name (OpenAI's rule; the strictest of them). */
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * A `responseFormat` the server can use, or a 400 naming it: `type` `json_schema`, a name providers
 * accept, and a schema that is an object schema (root `type` `"object"`), at most 64 KiB, with no
 * `$ref` outside itself, and that ajv compiles within the bounds every client schema is held to
 * (tools/schema-bounds.ts: depth, size, `uniqueItems`; patterns on RE2). Returns a copy holding
 * only the contract's fields.
 */
export function checkResponseFormat(value: unknown, field = 'responseFormat'): ResponseFormat {
  const bad = (why: string) => new DomainError(ErrorCode.InvalidRequest, `${field}${why}`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw bad(' must be an object { type: "json_schema", name?, schema }');
  }
  const { type, name, schema } = value as Record<string, unknown>;
  if (type !== 'json_schema') throw bad('.type must be "json_schema"');
  if (name !== undefined && (typeof name !== 'string' || !NAME.test(name))) {
    throw bad('.name must be 1–64 letters, digits, _ or -');
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw bad('.schema must be a JSON Schema object');
  }
  const record = schema as Record<string, unknown>;
  if (record.type !== 'object') throw bad('.schema must describe an object ("type": "object" at its root)');
  if (Buffer.byteLength(JSON.stringify(record)) > RESPONSE_SCHEMA_MAX_BYTES) {
    throw bad(`.schema is larger than ${RESPONSE_SCHEMA_MAX_BYTES / 1024} KiB`);
  }
  const outside = refOutside(record);
  if (outside !== null) {
    throw bad(
      `.schema has a $ref outside itself (${JSON.stringify(outside)}): only "#…" references are used`,
    );
  }
  const check = validateJsonSchema(record, 'schema');
  if (!check.ok) throw bad(`.${check.message}`);
  return { type: 'json_schema', ...(name === undefined ? {} : { name }), schema: record };
}

/**
 * The first `$ref` that does not point into the schema itself (`#`, `#/…`), walked iteratively:
 * ajv would otherwise try to resolve it by a loaded schema's `$id`, which a client must not reach.
 */
function refOutside(schema: Record<string, unknown>): string | null {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (!Array.isArray(node)) {
      const ref = (node as Record<string, unknown>).$ref;
      if (ref !== undefined && (typeof ref !== 'string' || !ref.startsWith('#')))
        return typeof ref === 'string' ? ref : JSON.stringify(ref);
    }
    stack.push(...Object.values(node as Record<string, unknown>));
  }
  return null;
}
