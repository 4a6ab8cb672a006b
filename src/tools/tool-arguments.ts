import { errorMessage } from './fs/errno';

export type ParsedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/**
 * Parses the arguments string a model sent with a tool call. An empty string counts as `{}`: several
 * models send nothing for tools without parameters.
 */
export function parseToolArguments(raw: string): ParsedArguments {
  if (raw.trim() === '') return { ok: true, value: {} };
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
  return { ok: true, value: value as Record<string, unknown> };
}
