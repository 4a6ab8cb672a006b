export interface CappedText {
  text: string;
  truncated: boolean;
  /** Size of the text before capping, in UTF-8 bytes. */
  totalBytes: number;
}

/** The longest prefix of `buf` of at most `maxBytes` that does not split a UTF-8 character. */
export function utf8Head(buf: Buffer, maxBytes: number): Buffer {
  if (buf.length <= maxBytes) return buf;
  let end = Math.max(0, maxBytes);
  while (end > 0 && isContinuationByte(buf[end])) end--;
  return buf.subarray(0, end);
}

/** The longest suffix of `buf` of at most `maxBytes` that does not split a UTF-8 character. */
export function utf8Tail(buf: Buffer, maxBytes: number): Buffer {
  if (buf.length <= maxBytes) return buf;
  let start = buf.length - Math.max(0, maxBytes);
  while (start < buf.length && isContinuationByte(buf[start])) start++;
  return buf.subarray(start);
}

function isContinuationByte(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/**
 * Keeps the start of `text` so that text plus marker fit in `maxBytes`, and says how much was cut
 * so the model knows it saw only part and can ask for less.
 */
export function capHead(text: string, maxBytes: number): CappedText {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return { text, truncated: false, totalBytes: buf.length };
  const markerRoom = Buffer.byteLength(headMarker(buf.length, buf.length));
  const head = utf8Head(buf, maxBytes - markerRoom);
  return {
    text: head.toString('utf8') + headMarker(head.length, buf.length),
    truncated: true,
    totalBytes: buf.length,
  };
}

function headMarker(shown: number, total: number): string {
  return `\n[truncated: showing ${shown} of ${total} bytes]`;
}

/**
 * Keeps the start and the end of `text` (for command output the end usually holds the error and
 * the summary), marking the cut in the middle.
 */
export function capHeadTail(text: string, maxBytes: number): CappedText {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return { text, truncated: false, totalBytes: buf.length };
  const markerRoom = Buffer.byteLength(middleMarker(buf.length, buf.length, buf.length));
  const room = Math.max(0, maxBytes - markerRoom);
  const head = utf8Head(buf, Math.floor(room / 2));
  const tail = utf8Tail(buf, room - head.length);
  return {
    text: head.toString('utf8') + middleMarker(head.length, tail.length, buf.length) + tail.toString('utf8'),
    truncated: true,
    totalBytes: buf.length,
  };
}

function middleMarker(head: number, tail: number, total: number): string {
  return `\n[truncated: showing the first ${head} and the last ${tail} of ${total} bytes]\n`;
}
