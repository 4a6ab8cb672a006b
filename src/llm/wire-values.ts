/** Reading loosely typed wire fields (wire-chunk.ts): each checked before it is used. */

export function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

export function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A string field's length (what holding it costs); 0 for anything else. */
export function length(value: unknown): number {
  return typeof value === 'string' ? value.length : 0;
}

export function count(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

export function hasKeys(value: object): boolean {
  for (const _key in value) return true;
  return false;
}

/** The longest response id kept: real ones are ~30–60 characters; a hostile one is not held whole. */
const RESPONSE_ID_MAX_CHARS = 256;

/** An upstream's response id, when it is a string of a sane length. */
export function responseIdOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' && value.length <= RESPONSE_ID_MAX_CHARS
    ? value
    : undefined;
}
