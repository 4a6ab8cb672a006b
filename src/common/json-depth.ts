/**
 * How deep JSON a client or a model sends may nest: the outermost object or array is level 1. Deeper
 * is a 400 in a request body and an INVALID_ARGUMENTS result in a tool call's arguments; below it,
 * the recursive walks over such values (class-transformer, JSON.stringify, ajv, our own) are safe.
 */
export const JSON_MAX_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Whether the JSON text `text` nests objects and arrays deeper than `maxDepth`. One linear pass that
 * counts brackets outside strings; it does not check the syntax (JSON.parse does that after), and
 * stops at the first level too deep.
 */
export function jsonNestingExceeds(text: string, maxDepth = JSON_MAX_DEPTH): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = endOfString(text, i + 1);
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}

/** The index of the quote that closes the string whose content starts at `from` (or the end of the text). */
function endOfString(text: string, from: number): number {
  let at = from;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote === -1) return text.length;
    // The quote is escaped when an odd number of backslashes precede it.
    let backslashes = 0;
    for (let j = quote - 1; j >= from && text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
    if ((backslashes & 1) === 0) return quote;
    at = quote + 1;
  }
}

/** Whether a parsed JSON value nests deeper than `maxDepth` (iterative; stops at the first level too deep). */
export function jsonValueNestingExceeds(value: unknown, maxDepth = JSON_MAX_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: Array<{ node: object; depth: number }> = [{ node: value, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (depth > maxDepth) return true;
    const children: unknown[] = Array.isArray(node) ? (node as unknown[]) : Object.values(node);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push({ node: child, depth: depth + 1 });
    }
  }
  return false;
}

/**
 * JSON.stringify for a parsed JSON value of any depth (JSON.stringify itself recurses and throws
 * RangeError on a few thousand levels). Values within JSON_MAX_DEPTH take the native path.
 */
export function stringifyJson(value: unknown): string {
  if (!jsonValueNestingExceeds(value)) return JSON.stringify(value);
  let out = '';
  // Each entry is a value to write, or a literal piece of punctuation to emit.
  const stack: Array<{ value: unknown } | string> = [{ value }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      out += item;
      continue;
    }
    const v = item.value;
    if (Array.isArray(v)) {
      stack.push(']');
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ value: v[i] === undefined ? null : (v[i] as unknown) });
        if (i > 0) stack.push(',');
      }
      out += '[';
    } else if (typeof v === 'object' && v !== null) {
      const entries = Object.entries(v).filter(([, child]) => child !== undefined);
      stack.push('}');
      for (let i = entries.length - 1; i >= 0; i--) {
        stack.push({ value: entries[i][1] });
        stack.push(`${JSON.stringify(entries[i][0])}:`);
        if (i > 0) stack.push(',');
      }
      out += '{';
    } else {
      out += JSON.stringify(v) ?? 'null';
    }
  }
  return out;
}
