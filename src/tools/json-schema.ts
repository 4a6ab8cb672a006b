import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';
import { errorMessage } from './fs/errno';
import { schemaBoundsProblem } from './schema-bounds';

export type SchemaCheck = { ok: true } | { ok: false; message: string };

/**
 * `pattern` and `patternProperties` come from clients and MCP servers: they run on RE2's linear-time
 * engine, so no pattern can backtrack catastrophically and block the event loop
 * (docs/decisions/008-linear-time-patterns.md). A pattern RE2 cannot compile (a backreference, a
 * lookaround) makes the schema unusable: a 400 naming it when a session declares it.
 */
const linearTimeRegExp = Object.assign(
  (pattern: string, flags: string): { test(input: string): boolean; toString(): string } => {
    const re = RE2JS.compile(pattern, flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
    // ajv keys its compiled patterns by toString(): each must name its own pattern.
    return { test: (input: string) => re.matcher(input).find(), toString: () => `/${pattern}/${flags}` };
  },
  // Only used by ajv's standalone code generation, which this project does not use.
  { code: 'linearTimeRegExp' },
);

// strict:false because tool schemas written for models carry keywords ajv does not know (e.g. "title" on odd places, vendor extensions).
const AJV_OPTIONS = { strict: false, allErrors: true, code: { regExp: linearTimeRegExp } } as const;
const ajv = new Ajv(AJV_OPTIONS);
addFormats(ajv);
// MCP servers may declare JSON Schema 2020-12 (`$schema`); the default instance speaks draft-07. Both
// share the options and formats: a protection added to one dialect must be added to the other.
const ajv2020 = new Ajv2020(AJV_OPTIONS);
addFormats(ajv2020);

function ajvFor(schema: Record<string, unknown>): Ajv {
  const dialect = schema.$schema;
  return typeof dialect === 'string' && dialect.includes('2020-12') ? ajv2020 : ajv;
}

/**
 * Compiles a JSON Schema into a validator. The schema is dropped from ajv's cache right away: client
 * schemas arrive per request, and keeping each would grow memory forever (and a reused `$id` would clash).
 * Throws when the schema itself is not valid.
 */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  const instance = ajvFor(schema);
  try {
    return instance.compile(schema);
  } finally {
    instance.removeSchema(schema);
  }
}

/**
 * Whether `schema` is a usable JSON Schema for tool parameters (an object schema ajv can compile);
 * `field` names it in the message (a response format's `schema` is checked the same way).
 */
export function validateJsonSchema(schema: unknown, field = 'parameters'): SchemaCheck {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return { ok: false, message: `${field}: must be a JSON Schema object` };
  }
  const record = schema as Record<string, unknown>;
  if (record.type !== undefined && record.type !== 'object') {
    return { ok: false, message: `${field}: the schema must describe an object ("type": "object")` };
  }
  const bounds = schemaBoundsProblem(record);
  if (bounds !== null) return { ok: false, message: `${field}: ${bounds}` };
  const instance = ajvFor(record);
  if (!instance.validateSchema(record)) {
    return { ok: false, message: `${field}: ${formatSchemaErrors(instance.errors ?? [])}` };
  }
  try {
    compileSchema(record);
    return { ok: true };
  } catch (err) {
    return { ok: false, message: `${field}: ${errorMessage(err)}` };
  }
}

/**
 * Validates `value` and says which field is wrong, in words a model can act on; `root` names the
 * value itself (tool-call arguments, or an answer).
 */
export function checkAgainst(validate: ValidateFunction, value: unknown, root = 'arguments'): SchemaCheck {
  if (validate(value)) return { ok: true };
  return { ok: false, message: formatSchemaErrors(validate.errors ?? [], root) };
}

/** `/path must be string` becomes `path: must be string`; required and unknown fields are named. */
export function formatSchemaErrors(errors: readonly ErrorObject[], root = 'arguments'): string {
  const messages = errors.map((e) => formatOne(e, root));
  return [...new Set(messages)].join('; ') || `invalid ${root}`;
}

function formatOne(error: ErrorObject, root: string): string {
  const at = fieldName(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${join(at, String(params.missingProperty))}: is required`;
    case 'additionalProperties':
      return `${join(at, String(params.additionalProperty))}: is not a known parameter`;
    case 'enum':
      return `${at || root}: must be one of ${JSON.stringify(params.allowedValues)}`;
    default:
      return `${at || root}: ${error.message ?? 'is invalid'}`;
  }
}

function fieldName(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function join(parent: string, child: string): string {
  return parent === '' ? child : `${parent}.${child}`;
}
