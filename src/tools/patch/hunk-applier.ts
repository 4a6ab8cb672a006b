import { findNearestMatch } from '../fs/nearest-match';
import { detectLineEnding } from '../fs/line-endings';
import type { PatchHunk } from './unified-diff-parser';

interface Line {
  text: string;
  /** '\n', '\r\n', or '' for a last line without a newline. */
  eol: string;
}

export type HunkApplication = { ok: true; text: string } | { ok: false; hunk: number; reason: string };

/**
 * Applies hunks to a file's text, fuzz-free: every context and removed line must match exactly
 * (line endings aside). A hunk may sit at an offset from its header's line number — the nearest
 * exact match after the previous hunk wins. Lines kept from the file keep their own line endings;
 * added lines take the file's (CRLF files stay CRLF).
 */
export function applyHunks(original: string, hunks: readonly PatchHunk[]): HunkApplication {
  const lines = splitLines(original);
  const eol = detectLineEnding(original) === 'crlf' ? '\r\n' : '\n';
  const out: Line[] = [];
  let cursor = 0;
  let offset = 0;
  let touchedEnd = false;
  let endsWithoutNewline = false;

  for (const [index, hunk] of hunks.entries()) {
    const expected = hunk.lines.filter((line) => line.op !== '+').map((line) => line.text);
    const wanted = expectedIndex(hunk, offset, cursor);
    const at = locate(lines, expected, wanted, cursor);
    if (at === null) {
      return { ok: false, hunk: index + 1, reason: explainMiss(lines, expected, wanted, cursor) };
    }

    out.push(...lines.slice(cursor, at));
    let fileIndex = at;
    for (const line of hunk.lines) {
      if (line.op === '+') out.push({ text: line.text, eol });
      else if (line.op === ' ') out.push(lines[fileIndex++]);
      else fileIndex++;
    }
    offset = at - (hunk.oldStart === null ? at : startIndexOf(hunk));
    cursor = at + expected.length;
    touchedEnd = cursor === lines.length;
    const lastNew = [...hunk.lines].reverse().find((line) => line.op !== '-');
    endsWithoutNewline = lastNew?.noNewline ?? false;
  }
  out.push(...lines.slice(cursor));
  return { ok: true, text: joinLines(out, eol, touchedEnd ? endsWithoutNewline : null) };
}

function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf('\n', start);
    if (newline === -1) {
      lines.push({ text: text.slice(start), eol: '' });
      break;
    }
    const crlf = newline > start && text[newline - 1] === '\r';
    lines.push({ text: text.slice(start, crlf ? newline - 1 : newline), eol: crlf ? '\r\n' : '\n' });
    start = newline + 1;
  }
  return lines;
}

/**
 * Every line but the last needs a newline (a last line may have gained followers); the last one has
 * one unless the patch says "\ No newline at end of file" for the end it rewrote.
 */
function joinLines(lines: Line[], eol: string, lastWithoutNewline: boolean | null): string {
  return lines
    .map((line, i) => {
      const isLast = i === lines.length - 1;
      if (!isLast) return line.text + (line.eol || eol);
      if (lastWithoutNewline === null) return line.text + line.eol;
      return line.text + (lastWithoutNewline ? '' : line.eol || eol);
    })
    .join('');
}

/** 0-based index of the hunk's first old line; for a pure insertion ("-5,0") the line after 5. */
function startIndexOf(hunk: PatchHunk): number {
  const start = hunk.oldStart ?? 1;
  return hunk.oldLines === 0 ? start : Math.max(0, start - 1);
}

function expectedIndex(hunk: PatchHunk, offset: number, cursor: number): number {
  return hunk.oldStart === null ? cursor : Math.max(cursor, startIndexOf(hunk) + offset);
}

/** The exact match nearest to `wanted`, searching both ways but never before `cursor`. */
function locate(
  lines: readonly Line[],
  expected: readonly string[],
  wanted: number,
  cursor: number,
): number | null {
  const last = lines.length - expected.length;
  if (last < cursor) return null;
  if (expected.length === 0) return Math.min(Math.max(wanted, cursor), lines.length);
  const from = Math.min(Math.max(wanted, cursor), last);
  for (let distance = 0; from - distance >= cursor || from + distance <= last; distance++) {
    if (from + distance <= last && matchesAt(lines, expected, from + distance)) return from + distance;
    if (distance > 0 && from - distance >= cursor && matchesAt(lines, expected, from - distance)) {
      return from - distance;
    }
  }
  return null;
}

function matchesAt(lines: readonly Line[], expected: readonly string[], at: number): boolean {
  return expected.every((text, i) => lines[at + i]?.text === text);
}

function explainMiss(
  lines: readonly Line[],
  expected: readonly string[],
  wanted: number,
  cursor: number,
): string {
  const where = `near line ${wanted + 1}`;
  if (lines.length - cursor < expected.length) {
    return `its ${expected.length} context and removed lines run past the end of the file (${where})`;
  }
  const rest = lines.slice(cursor).map((line) => line.text);
  const nearest = findNearestMatch(rest.join('\n'), expected.join('\n'));
  const base = `its context and removed lines do not match the file ${where} or anywhere after the previous hunk`;
  if (nearest === null) return base;
  const closest = `the closest text is at lines ${nearest.startLine + cursor}-${nearest.endLine + cursor}`;
  const diff = nearest.firstDifference;
  if (diff === null) return `${base}; ${closest}`;
  return `${base}; ${closest}, where line ${diff.line + cursor} is ${JSON.stringify(diff.found)} but the patch expects ${JSON.stringify(diff.expected)}`;
}
