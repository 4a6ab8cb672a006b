import { JSON_MAX_DEPTH, jsonNestingExceeds } from '../common/json-depth';
import { makeJsonStorable } from '../common/storable-text';
import { errorMessage } from './fs/errno';

export type ParsedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/**
 * Parses the arguments string a model sent with a tool call. An empty string counts as `{}`: several
 * models send nothing for tools without parameters. Nesting deeper than JSON_MAX_DEPTH is refused
 * before parsing, and strings that PostgreSQL cannot hold (`\u0000`, a lone `\ud800` escape) come
 * out as U+FFFD: the parsed value is stored as jsonb and walked by validators.
 */
export function parseToolArguments(raw: string): ParsedArguments {
  if (raw.trim() === '') return { ok: true, value: {} };
  if (jsonNestingExceeds(raw)) {
    return {
      ok: false,
      message: `The arguments are nested more than ${JSON_MAX_DEPTH} levels deep. Send a flatter JSON object.`,
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    const reason = errorMessage(err);
    return { ok: false, message: `The arguments are not valid JSON (${reason}). Send a single JSON object.` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, message: 'The arguments must be a JSON object with the parameters as its fields.' };
  }
  // Only an escape sequence can put such a character into a parsed string of storable text.
  if (raw.includes('\\u')) makeJsonStorable(value);
  return { ok: true, value: value as Record<string, unknown> };
}
