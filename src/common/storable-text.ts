/**
 * Text PostgreSQL can hold. `text` columns refuse U+0000, and `jsonb` refuses `\u0000` and unpaired
 * UTF-16 surrogates (a JavaScript string may hold both), so each becomes U+FFFD at the boundary
 * where text enters the server — once, so everything after it (the store, the streams, the model's
 * next request) sees the same characters.
 */

// es2024 String methods (Node ≥ 20); the project's lib is es2023.
declare global {
  interface String {
    isWellFormed(): boolean;
    toWellFormed(): string;
  }
}

export const REPLACEMENT_CHARACTER = '\uFFFD';

/** `text` with U+0000 and every unpaired surrogate replaced by U+FFFD; the same string when it has neither. */
export function toStorableText(text: string): string {
  if (text.indexOf('\u0000') === -1) return text.isWellFormed() ? text : text.toWellFormed();
  return text.toWellFormed().replaceAll('\u0000', REPLACEMENT_CHARACTER);
}

/** Whether `text` is already storable (no U+0000, no unpaired surrogate). */
export function isStorableText(text: string): boolean {
  return text.indexOf('\u0000') === -1 && text.isWellFormed();
}

/**
 * toStorableText for text that arrives in pieces: a high surrogate at the end of a piece is held
 * back until the next one, so a pair split across two pieces is judged whole and survives.
 */
export class StorableTextStream {
  private held = '';

  /** The storable text of `piece` (with what was held before it), minus a trailing high surrogate. */
  push(piece: string): string {
    let text = this.held === '' ? piece : this.held + piece;
    this.held = '';
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.held = text.slice(-1);
      text = text.slice(0, -1);
    }
    return toStorableText(text);
  }

  /** The end of the text: a high surrogate still held had no partner, so it becomes U+FFFD. */
  flush(): string {
    if (this.held === '') return '';
    this.held = '';
    return REPLACEMENT_CHARACTER;
  }
}

/**
 * Makes every string of a parsed JSON value storable, keys included, in place (a key that changes
 * is re-inserted under its new name, so key order can change for that key). The walk is iterative:
 * the value may come from a client or a model, nested as deep as they like.
 */
export function makeJsonStorable<T>(value: T): T {
  if (typeof value === 'string') return toStorableText(value) as T;
  if (typeof value !== 'object' || value === null) return value;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (Array.isArray(node)) {
      const items = node as unknown[];
      for (let i = 0; i < items.length; i++) {
        const item = items[i];
        if (typeof item === 'string') {
          if (!isStorableText(item)) items[i] = toStorableText(item);
        } else if (typeof item === 'object' && item !== null) {
          stack.push(item);
        }
      }
      continue;
    }
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const item = record[key];
      let storable = item;
      if (typeof item === 'string') {
        if (!isStorableText(item)) storable = toStorableText(item);
      } else if (typeof item === 'object' && item !== null) {
        stack.push(item);
      }
      if (!isStorableText(key)) {
        delete record[key];
        record[toStorableText(key)] = storable;
      } else if (storable !== item) {
        record[key] = storable;
      }
    }
  }
  return value;
}
