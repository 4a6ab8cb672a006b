import {
  isStorableText,
  makeJsonStorable,
  StorableTextStream,
  toStorableText,
} from '../../src/common/storable-text';

const FFFD = '\uFFFD';

describe('toStorableText', () => {
  it('replaces U+0000 and unpaired surrogates (high, low, reversed pair) with U+FFFD', () => {
    expect(toStorableText('a\u0000b')).toBe(`a${FFFD}b`);
    expect(toStorableText('a\ud800b')).toBe(`a${FFFD}b`);
    expect(toStorableText('a\udc00b')).toBe(`a${FFFD}b`);
    expect(toStorableText('\ude00\ud83d')).toBe(FFFD + FFFD);
    expect(toStorableText('\u0000\ud800\u0000')).toBe(FFFD.repeat(3));
  });

  it('keeps valid pairs, other control characters and U+FFFD itself, and returns the same string when clean', () => {
    const clean = 'héllo 😀 \t\n\u0001 \uFFFD';
    expect(toStorableText(clean)).toBe(clean);
    expect(isStorableText(clean)).toBe(true);
    expect(isStorableText('x\u0000')).toBe(false);
    expect(isStorableText('x\udbff')).toBe(false);
  });

  it('makes text PostgreSQL-safe whatever it holds (every code unit)', () => {
    let all = '';
    for (let c = 0; c <= 0xffff; c++) all += String.fromCharCode(c);
    const safe = toStorableText(all);
    expect(safe.includes('\u0000')).toBe(false);
    expect(safe.isWellFormed()).toBe(true);
    expect(safe).toHaveLength(all.length);
  });
});

describe('StorableTextStream', () => {
  it('keeps a surrogate pair split across two pieces whole', () => {
    const stream = new StorableTextStream();
    const pieces = [stream.push('x\ud83d'), stream.push('\ude00y'), stream.flush()];
    expect(pieces).toEqual(['x', '😀y', '']);
    expect(pieces.join('')).toBe('x😀y');
  });

  it('holds a piece that is only a high surrogate until its partner comes', () => {
    const stream = new StorableTextStream();
    expect(stream.push('\ud83d')).toBe('');
    expect(stream.push('\ude00')).toBe('😀');
  });

  it('replaces a held high surrogate whose next piece does not start with a low one', () => {
    const stream = new StorableTextStream();
    expect(stream.push('a\ud800') + stream.push('b')).toBe(`a${FFFD}b`);
  });

  it('gives a high surrogate still held at the end back as U+FFFD', () => {
    const stream = new StorableTextStream();
    expect(stream.push('end\ud800')).toBe('end');
    expect(stream.flush()).toBe(FFFD);
    expect(stream.flush()).toBe('');
  });

  it('replaces NUL and a lone low surrogate at once', () => {
    const stream = new StorableTextStream();
    expect(stream.push('\u0000\udc00')).toBe(FFFD + FFFD);
  });
});

describe('makeJsonStorable', () => {
  it('replaces in string values and keys, at any place, leaving other values alone', () => {
    const value = JSON.parse(
      '{"a\\u0000":"x\\ud800","n":1,"ok":"😀","list":["\\u0000",true,null,{"k\\udc00":["\\ud83d"]}]}',
    ) as unknown;
    expect(makeJsonStorable(value)).toEqual({
      [`a${FFFD}`]: `x${FFFD}`,
      n: 1,
      ok: '😀',
      list: [FFFD, true, null, { [`k${FFFD}`]: [FFFD] }],
    });
  });

  it('walks 200,000 levels without recursion', () => {
    const deep = JSON.parse(`${'['.repeat(200_000)}"\\u0000"${']'.repeat(200_000)}`) as unknown;
    makeJsonStorable(deep);
    let node = deep;
    while (Array.isArray(node)) node = node[0];
    expect(node).toBe(FFFD);
  });

  it('makes a bare string storable', () => {
    expect(makeJsonStorable('\u0000')).toBe(FFFD);
  });
});
