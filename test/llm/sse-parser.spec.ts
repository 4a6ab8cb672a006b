import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ModelError } from '../../src/llm/model-provider';
import { SSE_EVENT_MAX_CHARS, SseParser } from '../../src/llm/sse-parser';
import { DEFAULT_FIXTURES_DIR } from '../support/fake-upstream';

interface Parsed {
  data: string;
  event: string;
}

/** Feeds `body` to a parser in the given pieces (byte offsets) and collects its events. */
function parse(body: Uint8Array, cuts: number[] = [], stopAt?: (e: Parsed) => boolean): Parsed[] {
  const events: Parsed[] = [];
  const parser = new SseParser((data, event) => {
    events.push({ data, event });
    return stopAt?.({ data, event }) ?? false;
  });
  let from = 0;
  for (const cut of [...cuts, body.length]) {
    parser.push(body.subarray(from, cut));
    from = cut;
  }
  parser.end();
  return events;
}

const bytes = (text: string) => new TextEncoder().encode(text);

/**
 * The reference: the WHATWG algorithm written the obvious way, on the whole text at once (and, as
 * upstreams are lax, dispatching a last event that lacks its blank line).
 */
function reference(text: string): Parsed[] {
  const events: Parsed[] = [];
  let data: string[] = [];
  let event = '';
  const dispatch = () => {
    if (data.length > 0) events.push({ data: data.join('\n'), event });
    data = [];
    event = '';
  };
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === '') dispatch();
    else if (line.startsWith(':')) continue;
    else {
      const at = line.indexOf(':');
      const name = at === -1 ? line : line.slice(0, at);
      let value = at === -1 ? '' : line.slice(at + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (name === 'data') data.push(value);
      else if (name === 'event') event = value;
    }
  }
  dispatch();
  return events;
}

/** Deterministic pseudo-random cut points, so a failure can be replayed. */
function randomCuts(length: number, seed: number): number[] {
  const cuts: number[] = [];
  let x = seed;
  for (let at = 0; ;) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    at += 1 + (x % 97);
    if (at >= length) return cuts;
    cuts.push(at);
  }
}

const FIXTURES = readdirSync(DEFAULT_FIXTURES_DIR).filter((name) => name.endsWith('.sse'));

describe('SseParser on every recorded upstream stream', () => {
  it.each(FIXTURES)('%s: the same events however the bytes are split, with LF, CRLF or CR', (name) => {
    const text = readFileSync(join(DEFAULT_FIXTURES_DIR, name), 'utf8');
    const expected = reference(text);
    expect(expected.length).toBeGreaterThan(0);
    for (const variant of [text, text.replace(/\n/g, '\r\n'), text.replace(/\n/g, '\r')]) {
      const body = bytes(variant);
      expect(parse(body)).toEqual(expected);
      expect(parse(body, randomCuts(body.length, name.length))).toEqual(expected);
      expect(
        parse(
          body,
          Array.from({ length: body.length - 1 }, (_, i) => i + 1),
        ),
      ).toEqual(expected);
    }
    // Every payload is one JSON value or the [DONE] sentinel.
    for (const { data } of expected)
      if (data !== '[DONE]') expect(() => JSON.parse(data) as unknown).not.toThrow();
  });
});

/**
 * The same stream as a lax proxy might frame it: a keep-alive comment before every event, and each
 * JSON payload broken over two `data:` lines right after its opening brace (joined with \n, which
 * JSON reads as whitespace).
 */
function reframed(text: string): string {
  return text
    .split(/(?<=\n\n)/)
    .map((event) => `: keep-alive\n${event.replace(/^data: \{/m, 'data: {\ndata:')}`)
    .join('');
}

describe('SseParser on every recorded stream, reframed with comments and multi-line data', () => {
  it.each(FIXTURES)('%s: the same JSON values in the same order', (name) => {
    const text = readFileSync(join(DEFAULT_FIXTURES_DIR, name), 'utf8');
    const values = (events: Parsed[]) =>
      events.map(({ data, event }) => ({
        event,
        value: data === '[DONE]' ? data : (JSON.parse(data) as unknown),
      }));
    const body = bytes(reframed(text).replace(/\n/g, '\r\n'));
    const parsed = parse(body, randomCuts(body.length, 7));
    expect(parsed.some((e) => e.data.startsWith('{\n'))).toBe(true);
    expect(values(parsed)).toEqual(values(reference(text)));
  });
});

describe('SseParser framing', () => {
  it('skips comment lines, keep-alives included, and ignores id: and retry:', () => {
    const text = ': OPENROUTER PROCESSING\n\nretry: 10\nid: 4\n: note\ndata: {"a":1}\n\n:ping\n\n';
    expect(parse(bytes(text))).toEqual([{ data: '{"a":1}', event: '' }]);
  });

  it('joins multi-line data with \\n and keeps the event name of its event only', () => {
    const text = 'event: message_start\ndata: {"a":\ndata:  1}\n\ndata: x\n\n';
    expect(parse(bytes(text))).toEqual([
      { data: '{"a":\n 1}', event: 'message_start' },
      { data: 'x', event: '' },
    ]);
  });

  it('reads data: without a space, a bare data line as empty data, and not a field that only starts with data', () => {
    expect(parse(bytes('data:{"a":1}\n\ndata\ndata\n\ndatabase: no\n\n'))).toEqual([
      { data: '{"a":1}', event: '' },
      { data: '\n', event: '' },
    ]);
  });

  it('treats a CR at the end of one chunk and an LF at the start of the next as one line break', () => {
    const body = bytes('data: a\r\ndata: b\r\n\r\n');
    // Cut right after each CR.
    const cuts = [8, 17, 19];
    expect(parse(body, cuts)).toEqual([{ data: 'a\nb', event: '' }]);
  });

  it('decodes a character whose UTF-8 bytes are split between chunks', () => {
    const body = bytes('data: "é😀"\n\n');
    for (let cut = 1; cut < body.length; cut++) {
      expect(parse(body, [cut])).toEqual([{ data: '"é😀"', event: '' }]);
    }
  });

  it('dispatches a last event whose blank line, or whole line break, never came', () => {
    expect(parse(bytes('data: 1\n\ndata: 2'))).toEqual([
      { data: '1', event: '' },
      { data: '2', event: '' },
    ]);
    expect(parse(bytes('data: 1\n'))).toEqual([{ data: '1', event: '' }]);
  });

  it('reads nothing after a handler asks it to stop', () => {
    const events = parse(bytes('data: 1\n\ndata: [DONE]\n\ndata: 3\n\n'), [], (e) => e.data === '[DONE]');
    expect(events.map((e) => e.data)).toEqual(['1', '[DONE]']);
  });

  it('refuses an event longer than its limit instead of buffering without end', () => {
    const parser = new SseParser(() => undefined);
    const piece = bytes('x'.repeat(1024 * 1024));
    parser.push(bytes('data: '));
    let thrown: unknown;
    try {
      for (let i = 0; i <= SSE_EVENT_MAX_CHARS / piece.length; i++) parser.push(piece);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ModelError);
    expect(thrown).toMatchObject({ code: 'UPSTREAM_MALFORMED', retryable: false });
  });
});
