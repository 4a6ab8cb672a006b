import { ModelError } from './model-provider';

/**
 * Receives each event: its data (multi-line data joined with `\n`) and its `event:` name ('' when
 * none). Returning true stops the parser: nothing after that event is read.
 */
export type SseEventHandler = (data: string, event: string) => boolean | void;

/** Longest SSE event (or line) an upstream may send, in UTF-16 code units: a bound on what is buffered. */
export const SSE_EVENT_MAX_CHARS = 16 * 1024 * 1024;

const LF = 0x0a;
const COLON = 0x3a;
const SPACE = 0x20;
const DECODE_STREAM = { stream: true };

/**
 * A single-pass Server-Sent Events parser over the raw bytes of a response body. It decodes UTF-8
 * across chunk boundaries, splits lines on LF, CRLF or CR (also when CR and LF arrive in different
 * chunks), skips comments and the fields this client has no use for (`id:`, `retry:`), joins
 * multi-line data, and dispatches an event at each blank line — and, as upstreams are lax, at the
 * end of the body even without its blank line. Only `data:` values and `event:` names become strings.
 */
export class SseParser {
  private readonly decoder = new TextDecoder();
  /** The start of a line whose end has not arrived yet. */
  private partial = '';
  private data = '';
  private hasData = false;
  private event = '';
  /** The last chunk ended with CR: an LF starting the next one belongs to the same line break. */
  private afterCr = false;
  private stopped = false;

  constructor(private readonly onEvent: SseEventHandler) {}

  /** Whether a handler asked to stop. */
  get done(): boolean {
    return this.stopped;
  }

  push(bytes: Uint8Array): void {
    if (!this.stopped) this.feed(this.decoder.decode(bytes, DECODE_STREAM));
  }

  /** The body ended: the last line and the last event count even without their line breaks. */
  end(): void {
    if (this.stopped) return;
    this.feed(this.decoder.decode());
    if (this.stopped) return;
    if (this.partial !== '') {
      const line = this.partial;
      this.partial = '';
      this.line(line, 0, line.length);
    }
    if (!this.stopped) this.dispatch();
  }

  private feed(chunk: string): void {
    if (chunk === '') return;
    // A line still going on, and no line break in this chunk: held as it is, never rescanned (a
    // long line would otherwise cost a scan of all it held per chunk — quadratic).
    if (this.partial !== '' && chunk.indexOf('\n') === -1 && chunk.indexOf('\r') === -1) {
      if (this.partial.length + chunk.length + this.data.length > SSE_EVENT_MAX_CHARS) throw tooLarge();
      this.partial += chunk;
      return;
    }
    let pos = 0;
    if (this.afterCr) {
      this.afterCr = false;
      if (chunk.charCodeAt(0) === LF) pos = 1;
    }
    const text = this.partial === '' ? chunk : this.partial + chunk;
    if (this.partial !== '') pos = 0;
    this.partial = '';
    const n = text.length;
    // Each is the next CR or LF at or after `pos`, or -1 when there is none left in `text`.
    let cr = text.indexOf('\r', pos);
    let lf = text.indexOf('\n', pos);
    while (pos < n && !this.stopped) {
      if (cr !== -1 && cr < pos) cr = text.indexOf('\r', pos);
      if (lf !== -1 && lf < pos) lf = text.indexOf('\n', pos);
      if (cr === -1 && lf === -1) break;
      const eol = cr === -1 ? lf : lf === -1 ? cr : cr < lf ? cr : lf;
      this.line(text, pos, eol);
      if (eol === cr) {
        if (eol + 1 === n) {
          this.afterCr = true;
          pos = n;
        } else {
          pos = text.charCodeAt(eol + 1) === LF ? eol + 2 : eol + 1;
        }
      } else {
        pos = eol + 1;
      }
    }
    if (pos < n && !this.stopped) {
      if (n - pos + this.data.length > SSE_EVENT_MAX_CHARS) throw tooLarge();
      this.partial = text.slice(pos);
    }
  }

  /** One line, text[start, end) without its line break. */
  private line(text: string, start: number, end: number): void {
    if (start === end) {
      this.dispatch();
      return;
    }
    const first = text.charCodeAt(start);
    // 'd' for data, 'e' for event; comments (':') and other fields are skipped without a copy.
    if (first === 0x64 && text.startsWith('data', start)) {
      const value = fieldValue(text, start + 4, end);
      if (value === undefined) return;
      if (this.hasData) {
        if (this.data.length + value.length > SSE_EVENT_MAX_CHARS) throw tooLarge();
        this.data += '\n' + value;
      } else {
        this.data = value;
        this.hasData = true;
      }
    } else if (first === 0x65 && text.startsWith('event', start)) {
      const value = fieldValue(text, start + 5, end);
      if (value !== undefined) this.event = value;
    }
  }

  private dispatch(): void {
    const event = this.event;
    this.event = '';
    if (!this.hasData) return;
    const data = this.data;
    this.data = '';
    this.hasData = false;
    if (this.onEvent(data, event) === true) this.stopped = true;
  }
}

/**
 * The value of a field whose name ends at `at`: after the colon and one optional space, or '' when
 * the line is the bare name. undefined when the name goes on (`database: …` is not `data`).
 */
function fieldValue(text: string, at: number, end: number): string | undefined {
  if (at === end) return '';
  if (text.charCodeAt(at) !== COLON) return undefined;
  let from = at + 1;
  if (from < end && text.charCodeAt(from) === SPACE) from++;
  return text.slice(from, end);
}

function tooLarge(): ModelError {
  return new ModelError(
    'UPSTREAM_MALFORMED',
    `the model upstream sent an SSE event longer than ${SSE_EVENT_MAX_CHARS} characters`,
    false,
  );
}
