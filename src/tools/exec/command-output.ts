import { utf8Head, utf8Tail } from '../output-cap';

/** What a background command kept of its output (HeadTailCollector.kept()). */
export interface KeptOutput {
  head: Buffer;
  tail: Buffer;
  /** Offset of the tail's first byte in the whole output; past `head.length` when bytes were dropped. */
  tailStart: number;
  total: number;
}

/** get_command_output's choice of output: the bytes after `since`, the lines matching `grep`, the newest `tail` lines. */
export interface OutputQuery {
  since?: number;
  /** Tests one line; a linear-time pattern (docs/decisions/008-linear-time-patterns.md). */
  grep?: (line: string) => boolean;
  tail?: number;
}

export interface OutputView {
  text: string;
  /** The offset to ask from next (`since`): what this view covered up to. */
  next: number;
  /** Part of what was asked for did not fit in the budget. */
  cut: boolean;
}

/**
 * A view of a command's kept output within `maxBytes`. With `since` alone, the bytes from that
 * offset on, as many as fit (`next` says where to go on); with `grep` and/or `tail`, those lines of
 * what came after `since` (the newest ones when they do not all fit); with nothing, the newest
 * output. The bytes dropped between the head and the tail show as one line saying how many.
 */
export function viewOutput(kept: KeptOutput, query: OutputQuery, maxBytes: number): OutputView {
  const from = Math.min(Math.max(0, query.since ?? 0), kept.total);
  const headEnd = kept.head.length;
  const head = from < headEnd ? kept.head.subarray(from) : Buffer.alloc(0);
  const dropped = Math.max(0, kept.tailStart - Math.max(from, headEnd));
  const tail = kept.tail.subarray(Math.max(0, from - kept.tailStart));
  const note =
    dropped > 0 ? `\n[${dropped} bytes dropped here: only the start and the newest part are kept]\n` : '';

  if (query.grep === undefined && query.tail === undefined && query.since !== undefined) {
    return forwardFrom(from, head, dropped, note, tail, kept, maxBytes);
  }

  const headLines = splitLines(head.toString('utf8'));
  const noteAt = note ? headLines.length : -1;
  let lines = headLines.concat(note ? [note.trim()] : [], splitLines(tail.toString('utf8')));
  const grep = query.grep;
  // The note about dropped bytes is not output: grep never matches it.
  if (grep !== undefined) lines = lines.filter((line, i) => i !== noteAt && grep(line));
  if (query.tail !== undefined) lines = lines.slice(Math.max(0, lines.length - query.tail));
  const text = lines.join('\n');
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return { text, next: kept.total, cut: false };
  // The newest lines that fit, from a line's start (a partial first line only when one line is all that fits).
  const newest = utf8Tail(buf, maxBytes).toString('utf8');
  const start = newest.indexOf('\n');
  return { text: start >= 0 ? newest.slice(start + 1) : newest, next: kept.total, cut: true };
}

/** The bytes from `from` on, in order, as many as fit; `next` is the offset right after the last one shown. */
function forwardFrom(
  from: number,
  head: Buffer,
  dropped: number,
  note: string,
  tail: Buffer,
  kept: KeptOutput,
  maxBytes: number,
): OutputView {
  let room = maxBytes;
  const shownHead = utf8Head(head, room);
  room -= shownHead.length;
  if (shownHead.length < head.length) {
    return { text: shownHead.toString('utf8'), next: from + shownHead.length, cut: true };
  }
  const noteBytes = Buffer.byteLength(note);
  if (dropped > 0 && noteBytes > room) {
    return { text: shownHead.toString('utf8'), next: from + shownHead.length, cut: true };
  }
  room -= noteBytes;
  const shownTail = utf8Head(tail, room);
  const text = shownHead.toString('utf8') + note + shownTail.toString('utf8');
  return {
    text,
    next: kept.total - (tail.length - shownTail.length),
    cut: shownTail.length < tail.length,
  };
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
