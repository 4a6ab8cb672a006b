import type { FileHandle } from 'node:fs/promises';
import { utf8Head } from '../output-cap';

export interface LineRangeRequest {
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  maxBytes: number;
  signal?: AbortSignal;
}

export interface LineRange {
  text: string;
  /** Last line (1-based) of which anything was returned; startLine - 1 when nothing was. */
  lastLine: number;
  /** The byte limit stopped the read before the requested range ended. */
  cut: boolean;
  /** The last returned line is incomplete: a single line longer than the limit. */
  cutMidLine: boolean;
  totalLines: number;
  totalBytes: number;
}

/**
 * Streams a file once, collecting whole lines of the range up to `maxBytes` and counting every line,
 * so a huge file costs memory only for what is returned. An open file is read from its start and
 * left open; a file given as its bytes is not read at all.
 */
export async function readLineRange(
  file: FileHandle | Buffer,
  request: LineRangeRequest,
): Promise<LineRange> {
  const taken: Buffer[] = [];
  let takenBytes = 0;
  let takenOfLine = 0;
  let line = 1;
  let lastLine = request.startLine - 1;
  let cut = false;
  let cutMidLine = false;
  let totalBytes = 0;
  let newlines = 0;
  let endsWithNewline = false;

  const take = (piece: Buffer): void => {
    if (takenBytes + piece.length <= request.maxBytes) {
      taken.push(piece);
      takenBytes += piece.length;
      takenOfLine += piece.length;
      lastLine = line;
      return;
    }
    cut = true;
    // Whole lines where possible, so the model can continue at a line; a single overlong line is cut inside.
    if (takenOfLine > 0 || takenBytes === 0) {
      const head = utf8Head(piece, request.maxBytes - takenBytes);
      taken.push(head);
      takenBytes += head.length;
      lastLine = line;
      cutMidLine = true;
    }
  };

  const stream = Buffer.isBuffer(file)
    ? [file]
    : file.createReadStream({ start: 0, highWaterMark: 64 * 1024, signal: request.signal, autoClose: false });
  for await (const chunk of stream) {
    const buf = chunk as Buffer;
    totalBytes += buf.length;
    endsWithNewline = buf[buf.length - 1] === 0x0a;
    let pos = 0;
    while (pos < buf.length) {
      const newline = buf.indexOf(0x0a, pos);
      const end = newline === -1 ? buf.length : newline + 1;
      if (!cut && line >= request.startLine && line <= request.endLine) take(buf.subarray(pos, end));
      pos = end;
      if (newline !== -1) {
        newlines++;
        line++;
        takenOfLine = 0;
      }
    }
  }
  const totalLines = totalBytes === 0 ? 0 : newlines + (endsWithNewline ? 0 : 1);
  return {
    text: Buffer.concat(taken).toString('utf8'),
    lastLine,
    cut,
    cutMidLine,
    totalLines,
    totalBytes,
  };
}
