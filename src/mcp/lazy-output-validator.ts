import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from '@modelcontextprotocol/sdk/validation/types.js';
import type { ValidateFunction } from 'ajv';
import { checkAgainst, compileSchema } from '../tools/json-schema';

/**
 * The MCP client's checker of tools' structured output. The SDK asks for a validator of every
 * tool's `outputSchema` on every `tools/list`; its own compiles each one at once, into an ajv
 * instance that keeps every schema it ever saw — a server announcing list changes thousands of
 * times grew memory without end. Here a schema is compiled only when a call's result is checked
 * against it (once per listing), with the project's compiler: linear-time patterns, nothing kept
 * in ajv's cache.
 */
export const lazyOutputValidator: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    let compiled: ValidateFunction | undefined;
    return (input) => {
      compiled ??= compileSchema(schema);
      const check = checkAgainst(compiled, input);
      return check.ok
        ? { valid: true, data: input as T, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: check.message };
    };
  },
};
