import { detectLineEnding, matchLineEnding } from '../../src/tools/fs/line-endings';
import { findNearestMatch } from '../../src/tools/fs/nearest-match';
import { capHead, capHeadTail } from '../../src/tools/output-cap';
import { applyHunks } from '../../src/tools/patch/hunk-applier';
import { parseUnifiedDiff } from '../../src/tools/patch/unified-diff-parser';

describe('output caps', () => {
  it('leaves short text alone', () => {
    expect(capHead('short', 100)).toEqual({ text: 'short', truncated: false, totalBytes: 5 });
  });

  it('keeps the head within the limit, marker included', () => {
    const capped = capHead('a'.repeat(500), 100);
    expect(Buffer.byteLength(capped.text)).toBeLessThanOrEqual(100);
    expect(capped.text).toMatch(/^a+\n\[truncated: showing \d+ of 500 bytes\]$/);
  });

  it('keeps head and tail within the limit', () => {
    const capped = capHeadTail(`HEAD${'x'.repeat(1000)}TAIL`, 200);
    expect(Buffer.byteLength(capped.text)).toBeLessThanOrEqual(200);
    expect(capped.text.startsWith('HEAD')).toBe(true);
    expect(capped.text.endsWith('TAIL')).toBe(true);
    expect(capped.text).toMatch(/\[truncated: showing the first \d+ and the last \d+ of 1008 bytes\]/);
  });
});

describe('line endings', () => {
  it('tells LF, CRLF, mixed and unbroken text apart', () => {
    expect(detectLineEnding('a\nb\n')).toBe('lf');
    expect(detectLineEnding('a\r\nb\r\n')).toBe('crlf');
    expect(detectLineEnding('a\r\nb\n')).toBe('mixed');
    expect(detectLineEnding('ab')).toBe('none');
  });

  it('converts model text to CRLF only for CRLF files', () => {
    expect(matchLineEnding('a\nb\r\n', 'crlf')).toBe('a\r\nb\r\n');
    expect(matchLineEnding('a\nb\n', 'mixed')).toBe('a\nb\n');
  });
});

describe('findNearestMatch', () => {
  it('finds the window that differs only in indentation', () => {
    const match = findNearestMatch('x\nif (a) {\n    go();\n}\ny\n', 'if (a) {\n  go();\n}');
    expect(match).toMatchObject({
      startLine: 2,
      endLine: 4,
      firstDifference: { line: 3, expected: '  go();', found: '    go();' },
    });
  });

  it('returns null for an empty file', () => {
    expect(findNearestMatch('', 'anything')).toBeNull();
  });
});

describe('applyHunks', () => {
  const hunks = (patch: string) => parseUnifiedDiff(patch)[0].hunks;

  it('picks the exact match nearest the header line when the context repeats', () => {
    const text = 'x\nsame\nx\nx\nx\nx\nsame\nx\n';
    const result = applyHunks(text, hunks('--- a/f\n+++ b/f\n@@ -7 +7 @@\n-same\n+changed\n'));
    expect(result).toEqual({ ok: true, text: 'x\nsame\nx\nx\nx\nx\nchanged\nx\n' });
  });

  it('explains a hunk that runs past the end of the file', () => {
    const result = applyHunks('a\n', hunks('--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n b\n-c\n+d\n'));
    expect(result).toMatchObject({ ok: false, hunk: 1 });
    expect(!result.ok && result.reason).toMatch(/past the end of the file/);
  });

  it('adds a newline before appending to a last line that had none', () => {
    const result = applyHunks('a', hunks('--- a/f\n+++ b/f\n@@ -1,0 +2 @@\n+b\n'));
    expect(result).toEqual({ ok: true, text: 'a\nb\n' });
  });
});
