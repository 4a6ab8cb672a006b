export type LineEnding = 'lf' | 'crlf' | 'mixed' | 'none';

/** How a text breaks its lines; `crlf` only when every break is CRLF, so a mixed file is never rewritten wholesale. */
export function detectLineEnding(text: string): LineEnding {
  const breaks = countOf(text, '\n');
  if (breaks === 0) return 'none';
  const crlf = countOf(text, '\r\n');
  if (crlf === breaks) return 'crlf';
  return crlf === 0 ? 'lf' : 'mixed';
}

export function toLf(text: string): string {
  return text.replace(/\r\n/g, '\n');
}

export function toCrlf(text: string): string {
  return toLf(text).replace(/\n/g, '\r\n');
}

/**
 * Text written by a model (which thinks in LF) made to fit an existing file's line endings, so a CRLF
 * file stays CRLF. LF, mixed and unbroken files take the text as written.
 */
export function matchLineEnding(text: string, ending: LineEnding): string {
  return ending === 'crlf' ? toCrlf(text) : text;
}

function countOf(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}
