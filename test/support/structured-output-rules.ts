/**
 * What the real APIs refuse of a structured-output request, in their words, for the fakes: OpenAI's
 * (Chat Completions `response_format.json_schema`, Responses `text.format`) and Anthropic's
 * (`output_config.format`). Written from their documentation, apart from the server's own code, so a
 * request the server builds wrongly is refused here as it would be there.
 */

const OPENAI_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Every subschema of `schema` (itself included) that describes an object, with where it is. */
function objectSchemas(schema: unknown, at = '()'): { node: Record<string, unknown>; at: string }[] {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return [];
  const node = schema as Record<string, unknown>;
  const found: { node: Record<string, unknown>; at: string }[] = [];
  if (node.type === 'object') found.push({ node, at });
  const properties = (node.properties ?? {}) as Record<string, unknown>;
  for (const [name, sub] of Object.entries(properties))
    found.push(...objectSchemas(sub, `${at}.properties.${name}`));
  if (node.items !== undefined) found.push(...objectSchemas(node.items, `${at}.items`));
  for (const key of ['anyOf', 'allOf', 'oneOf'] as const) {
    const list = node[key];
    if (Array.isArray(list)) list.forEach((sub, i) => found.push(...objectSchemas(sub, `${at}.${key}.${i}`)));
  }
  for (const key of ['$defs', 'definitions'] as const) {
    const defs = node[key];
    if (typeof defs === 'object' && defs !== null) {
      for (const [name, sub] of Object.entries(defs))
        found.push(...objectSchemas(sub, `${at}.${key}.${name}`));
    }
  }
  return found;
}

/**
 * OpenAI's refusal of a json_schema format (`param` as it names it), or undefined: a name outside
 * ^[a-zA-Z0-9_-]{1,64}$, a schema that is not an object, and under `strict: true` an object that is
 * not closed or does not require every property.
 */
export function openAiFormatRefusal(
  format: { type?: unknown; name?: unknown; schema?: unknown; strict?: unknown },
  param: string,
): string | undefined {
  if (format.type !== 'json_schema') return undefined;
  if (typeof format.name !== 'string' || !OPENAI_NAME.test(format.name)) {
    return `Invalid '${param}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`;
  }
  if (typeof format.schema !== 'object' || format.schema === null) {
    return `Invalid type for '${param}.schema': expected an object.`;
  }
  if (format.strict !== true) return undefined;
  for (const { node, at } of objectSchemas(format.schema)) {
    if (node.additionalProperties !== false) {
      return `Invalid schema for response_format '${format.name}': In context=${at}, 'additionalProperties' is required to be supplied and to be false.`;
    }
    const required = Array.isArray(node.required) ? (node.required as unknown[]) : [];
    const missing = Object.keys(node.properties ?? {}).find((k) => !required.includes(k));
    if (missing !== undefined) {
      return `Invalid schema for response_format '${format.name}': In context=${at}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'.`;
    }
  }
  return undefined;
}

/** Constraints Anthropic's structured outputs do not take (its "JSON Schema limitations"). */
const ANTHROPIC_UNSUPPORTED = [
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'multipleOf',
];

/** Anthropic's refusal of `output_config.format`, or undefined. */
export function anthropicFormatRefusal(format: unknown): string | undefined {
  if (format === undefined || format === null) return undefined;
  const f = format as { type?: unknown; schema?: unknown };
  if (f.type !== 'json_schema') return "output_config.format.type: Input should be 'json_schema'";
  if (typeof f.schema !== 'object' || f.schema === null) return 'output_config.format.schema: Field required';
  for (const { node } of objectSchemas(f.schema)) {
    if (node.additionalProperties !== false) {
      return "output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly set to false";
    }
  }
  const text = JSON.stringify(f.schema);
  for (const keyword of ANTHROPIC_UNSUPPORTED) {
    if (text.includes(`"${keyword}":`)) {
      return `output_config.format.schema: The '${keyword}' keyword is not supported in structured outputs`;
    }
  }
  return undefined;
}
