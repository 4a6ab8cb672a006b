import { utf8Head, utf8Tail } from './output-cap';

export type OutputStream = 'stdout' | 'stderr';

/**
 * What one call may stream live, both streams together. Every chunk becomes a stored
 * `tool_call_output` event, so these bound the rows and bytes one call can add to the event log
 * and the memory its stream takes, whatever the tool produces (a `yes`, an MCP server's progress
 * flood).
 *
 * - 1 MiB of head: four times the result's own cap (TOOL_OUTPUT_MAX_BYTES, 256 KiB by default), so
 *   a person watching a build sees far more than the model gets, yet a runaway call stores at most
 *   about a megabyte.
 * - 4,096 chunks of head: a command's output is batched (about 10 chunks a second at most), so
 *   this is several minutes of a steadily printing build; tiny MCP progress notices (one chunk
 *   each) are what it stops.
 * - 64 KiB / 64 chunks of tail, kept in memory (rolling) and sent at the end: the end of an output
 *   holds the error and the summary.
 */
export const LIVE_HEAD_BYTES = 1024 * 1024;
export const LIVE_HEAD_CHUNKS = 4096;
export const LIVE_TAIL_BYTES = 64 * 1024;
export const LIVE_TAIL_CHUNKS = 64;

export interface LiveOutputBounds {
  headBytes: number;
  headChunks: number;
  tailBytes: number;
  tailChunks: number;
}

export const LIVE_OUTPUT_BOUNDS: LiveOutputBounds = {
  headBytes: LIVE_HEAD_BYTES,
  headChunks: LIVE_HEAD_CHUNKS,
  tailBytes: LIVE_TAIL_BYTES,
  tailChunks: LIVE_TAIL_CHUNKS,
};

interface Piece {
  stream: OutputStream;
  buf: Buffer;
}

/**
 * One call's live output, bounded: the head is passed on as it comes; past it only a rolling tail
 * is kept, and `end` sends one chunk saying how many bytes were dropped followed by that tail. The
 * memory it holds never exceeds the tail, however long the tool goes on; after `end` (the call is
 * over, or abandoned) nothing more is passed on.
 */
export class LiveOutput {
  private headBytes = 0;
  private headChunks = 0;
  /** Set once a chunk did not fit: from then on everything goes to the tail, so the order stays. */
  private headFull = false;
  private tail: Piece[] = [];
  private tailBytes = 0;
  private dropped = 0;
  private ended = false;

  constructor(
    private readonly emit: (stream: OutputStream, chunk: string) => void,
    private readonly bounds: LiveOutputBounds = LIVE_OUTPUT_BOUNDS,
  ) {}

  push(stream: OutputStream, chunk: string): void {
    if (this.ended || chunk === '') return;
    if (!this.headFull) {
      const room = this.bounds.headBytes - this.headBytes;
      const bytes = Buffer.byteLength(chunk);
      if (bytes <= room && this.headChunks < this.bounds.headChunks) {
        this.passOn(stream, chunk, bytes);
        return;
      }
      this.headFull = true;
      if (this.headChunks >= this.bounds.headChunks) {
        this.keep(stream, Buffer.from(chunk, 'utf8'));
        return;
      }
      // The chunk that crosses the bound: its start still goes out live, at a character's edge.
      const buf = Buffer.from(chunk, 'utf8');
      const head = utf8Head(buf, room);
      if (head.length > 0) this.passOn(stream, head.toString('utf8'), head.length);
      this.keep(stream, buf.subarray(head.length));
      return;
    }
    this.keep(stream, Buffer.from(chunk, 'utf8'));
  }

  /** Sends what the tail holds (after a chunk naming what was dropped); later pushes are ignored. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    const tail = this.tail;
    this.tail = [];
    if (tail.length === 0) return;
    const kept = tail.reduce((sum, p) => sum + p.buf.length, 0);
    const [first, ...rest] = tail;
    const marker =
      this.dropped > 0
        ? `\n[live output cut: ${this.dropped} bytes dropped after the first ${this.headBytes}; the last ${kept} follow]\n`
        : '';
    this.emit(first.stream, marker + first.buf.toString('utf8'));
    for (const piece of rest) this.emit(piece.stream, piece.buf.toString('utf8'));
  }

  private passOn(stream: OutputStream, chunk: string, bytes: number): void {
    this.headBytes += bytes;
    this.headChunks += 1;
    this.emit(stream, chunk);
  }

  /** Adds to the rolling tail, dropping its oldest bytes past its bounds. */
  private keep(stream: OutputStream, buf: Buffer): void {
    if (buf.length === 0) return;
    if (buf.length > this.bounds.tailBytes) {
      const cut = utf8Tail(buf, this.bounds.tailBytes);
      this.dropped += buf.length - cut.length;
      buf = Buffer.from(cut); // A copy: the slice would hold the whole chunk's memory.
    }
    this.tail.push({ stream, buf });
    this.tailBytes += buf.length;
    while (this.tailBytes > this.bounds.tailBytes || this.tail.length > this.bounds.tailChunks) {
      const oldest = this.tail.shift()!;
      this.tailBytes -= oldest.buf.length;
      this.dropped += oldest.buf.length;
    }
  }
}
