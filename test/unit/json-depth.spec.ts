import {
  JSON_MAX_DEPTH,
  jsonNestingExceeds,
  jsonValueNestingExceeds,
  stringifyJson,
} from '../../src/common/json-depth';

const nested = (depth: number, open = '[', close = ']', inner = '') =>
  open.repeat(depth) + inner + close.repeat(depth);

describe('jsonNestingExceeds', () => {
  it('allows 64 levels (the outermost is level 1) and refuses 65, for arrays and objects', () => {
    expect(JSON_MAX_DEPTH).toBe(64);
    expect(jsonNestingExceeds(nested(64))).toBe(false);
    expect(jsonNestingExceeds(nested(65))).toBe(true);
    const objects = (depth: number) => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
    expect(jsonNestingExceeds(objects(64))).toBe(false);
    expect(jsonNestingExceeds(objects(65))).toBe(true);
  });

  it('counts depth, not the number of brackets', () => {
    const wide = `[${Array(10_000).fill('[[1]]').join(',')}]`;
    expect(jsonNestingExceeds(wide)).toBe(false);
    // {"b": {"c": [ {} ]}} is 4 levels deep.
    expect(jsonNestingExceeds('{"a":[1],"b":{"c":[{}]}}', 4)).toBe(false);
    expect(jsonNestingExceeds('{"a":[1],"b":{"c":[{}]}}', 3)).toBe(true);
    expect(jsonNestingExceeds('"just a string"')).toBe(false);
    expect(jsonNestingExceeds('42')).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    const inString = JSON.stringify({ text: '['.repeat(1000) + '"\\"{{{{' + '\\' });
    expect(jsonNestingExceeds(inString)).toBe(false);
    // An escaped backslash does not escape the quote after it: the string ends there.
    const afterEscapes = `[{"a":"x\\\\"},${'['.repeat(10)}`;
    expect(jsonNestingExceeds(afterEscapes, 10)).toBe(true);
    expect(jsonNestingExceeds(afterEscapes, 11)).toBe(false);
    expect(jsonNestingExceeds(`{"a":"\\"[[["}`, 1)).toBe(false);
  });

  it('scans a 1,000,000-deep text without recursion and stops at the first level too deep', () => {
    expect(jsonNestingExceeds(nested(1_000_000))).toBe(true);
  });
});

describe('jsonValueNestingExceeds', () => {
  it('agrees with the text scan on parsed values', () => {
    for (const depth of [1, 63, 64, 65, 20_000]) {
      const text = nested(depth, '{"k":[', ']}', '0');
      expect(jsonValueNestingExceeds(JSON.parse(text))).toBe(jsonNestingExceeds(text));
    }
    expect(jsonValueNestingExceeds('x')).toBe(false);
    expect(jsonValueNestingExceeds(null)).toBe(false);
  });
});

describe('stringifyJson', () => {
  it('matches JSON.stringify on ordinary values', () => {
    const value = { a: [1, 'two', null, true, { b: 'ü😀"\n' }], c: {}, d: [], e: -0.5 };
    expect(stringifyJson(value)).toBe(JSON.stringify(value));
  });

  it('serialises 20,000 levels, where JSON.stringify overflows the stack', () => {
    const text = nested(20_000, '{"k":[', ']}', '"x"');
    const value = JSON.parse(text) as unknown;
    expect(() => JSON.stringify(value)).toThrow(RangeError);
    expect(stringifyJson(value)).toBe(text);
  });
});
