import { createHash } from 'node:crypto';
import { access, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppConfig } from '../../src/config/app-config';
import { ApplyPatchTool } from '../../src/tools/builtin/apply-patch.tool';
import { parseUnifiedDiff } from '../../src/tools/patch/unified-diff-parser';
import { ToolError } from '../../src/tools/tool';
import {
  makeWorkspace,
  testConfig,
  toolContext,
  toolErrorOf,
  type TempWorkspace,
} from './support/tool-fixtures';

const sha = (data: string) => createHash('sha256').update(data).digest('hex');
const numbered = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}\n`).join('');

describe('apply_patch', () => {
  const tool = new ApplyPatchTool();
  let ws: TempWorkspace;
  let config: AppConfig;
  const read = (path: string) => readFile(join(ws.root, path), 'utf8');
  const put = (path: string, content: string) => writeFile(join(ws.root, path), content);
  const exists = (path: string) =>
    access(join(ws.root, path)).then(
      () => true,
      () => false,
    );

  beforeEach(async () => {
    ws = await makeWorkspace();
    config = testConfig(ws.root);
  });
  afterEach(() => ws.cleanup());

  it('applies a hunk and reports the change with hashes', async () => {
    await put('a.txt', 'one\ntwo\nthree\n');
    const patch = '--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n';
    const result = await tool.execute({ patch }, toolContext(config));
    expect(await read('a.txt')).toBe('one\n2\nthree\n');
    expect(result.content).toBe('Applied the patch:\n  modified a.txt (+1 -1)');
    expect(result.changes).toEqual([
      { path: 'a.txt', beforeSha256: sha('one\ntwo\nthree\n'), afterSha256: sha('one\n2\nthree\n') },
    ]);
  });

  it('applies a hunk found at an offset from its header line', async () => {
    await put('a.txt', numbered(1, 30));
    const patch =
      '--- a/a.txt\n+++ b/a.txt\n@@ -5,3 +5,3 @@\n line 20\n-line 21\n+line twenty-one\n line 22\n';
    await tool.execute({ patch }, toolContext(config));
    expect(await read('a.txt')).toBe(numbered(1, 20) + 'line twenty-one\n' + numbered(22, 30));
  });

  it('applies several hunks and several files in one patch', async () => {
    await put('a.txt', numbered(1, 20));
    await put('b.txt', 'x\ny\n');
    const patch = [
      'diff --git a/a.txt b/a.txt',
      'index 123..456 100644',
      '--- a/a.txt',
      '+++ b/a.txt',
      '@@ -2,3 +2,4 @@',
      ' line 2',
      '+inserted',
      ' line 3',
      ' line 4',
      '@@ -15,3 +16,2 @@',
      ' line 15',
      '-line 16',
      ' line 17',
      'diff --git a/b.txt b/b.txt',
      '--- a/b.txt',
      '+++ b/b.txt',
      '@@ -1,2 +1,2 @@',
      '-x',
      '+X',
      ' y',
      '',
    ].join('\n');
    const result = await tool.execute({ patch }, toolContext(config));
    expect(await read('a.txt')).toBe(numbered(1, 2) + 'inserted\n' + numbered(3, 15) + numbered(17, 20));
    expect(await read('b.txt')).toBe('X\ny\n');
    expect(result.changes?.map((change) => change.path)).toEqual(['a.txt', 'b.txt']);
  });

  it('creates a file from /dev/null, with its folders', async () => {
    const patch =
      '--- /dev/null\n+++ b/src/new.ts\n@@ -0,0 +1,2 @@\n+export const a = 1;\n+export const b = 2;\n';
    const result = await tool.execute({ patch }, toolContext(config));
    expect(await read('src/new.ts')).toBe('export const a = 1;\nexport const b = 2;\n');
    expect(result.changes).toEqual([
      {
        path: 'src/new.ts',
        beforeSha256: null,
        afterSha256: sha('export const a = 1;\nexport const b = 2;\n'),
      },
    ]);
  });

  it('deletes a file to /dev/null', async () => {
    await put('old.txt', 'a\nb\n');
    const result = await tool.execute(
      { patch: '--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n' },
      toolContext(config),
    );
    expect(await exists('old.txt')).toBe(false);
    expect(result.changes).toEqual([{ path: 'old.txt', beforeSha256: sha('a\nb\n'), afterSha256: null }]);
  });

  it('refuses the whole patch when one hunk does not apply, changing no file', async () => {
    await put('a.txt', 'one\ntwo\n');
    await put('b.txt', 'three\nfour\n');
    const patch = [
      '--- a/a.txt',
      '+++ b/a.txt',
      '@@ -1,2 +1,2 @@',
      '-one',
      '+ONE',
      ' two',
      '--- a/b.txt',
      '+++ b/b.txt',
      '@@ -1,2 +1,2 @@',
      ' three',
      '-fuor',
      '+FOUR',
      '--- /dev/null',
      '+++ b/c.txt',
      '@@ -0,0 +1 @@',
      '+c',
    ].join('\n');
    const message = await toolErrorOf(tool.execute({ patch }, toolContext(config)), 'CONFLICT');
    expect(message).toMatch(/no file was changed/);
    expect(message).toMatch(/b\.txt: hunk 1 \(@@ -1,2 \+1,2 @@\) does not apply/);
    expect(message).toContain('line 2 is "four" but the patch expects "fuor"');
    expect(await read('a.txt')).toBe('one\ntwo\n');
    expect(await read('b.txt')).toBe('three\nfour\n');
    expect(await exists('c.txt')).toBe(false);
  });

  it('does not fuzz: a context line that differs in whitespace is refused', async () => {
    await put('a.txt', '  indented\nnext\n');
    await toolErrorOf(
      tool.execute(
        { patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n indented\n-next\n+NEXT\n' },
        toolContext(config),
      ),
      'CONFLICT',
    );
  });

  it('refuses to create a file that already exists', async () => {
    await put('a.txt', 'x\n');
    const message = await toolErrorOf(
      tool.execute({ patch: '--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+y\n' }, toolContext(config)),
      'CONFLICT',
    );
    expect(message).toMatch(/a\.txt: already exists/);
  });

  it('dry_run reports what would change and writes nothing', async () => {
    await put('a.txt', 'one\n');
    const patch =
      '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+uno\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+n\n';
    const result = await tool.execute({ patch, dry_run: true }, toolContext(config));
    expect(result.content).toBe(
      'Dry run: the patch applies cleanly. It would change:\n  modified a.txt (+1 -1)\n  created new.txt (+1 -0)',
    );
    expect(result.changes).toBeUndefined();
    expect(await read('a.txt')).toBe('one\n');
    expect(await exists('new.txt')).toBe(false);
  });

  it('keeps CRLF line endings when patching a CRLF file with an LF patch', async () => {
    await put('win.txt', 'one\r\ntwo\r\nthree\r\n');
    await tool.execute(
      { patch: '--- a/win.txt\n+++ b/win.txt\n@@ -1,3 +1,4 @@\n one\n-two\n+2\n+2.5\n three\n' },
      toolContext(config),
    );
    expect(await read('win.txt')).toBe('one\r\n2\r\n2.5\r\nthree\r\n');
  });

  it('honours "\\ No newline at end of file"', async () => {
    await put('a.txt', 'a\nb');
    await tool.execute(
      {
        patch:
          '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n',
      },
      toolContext(config),
    );
    expect(await read('a.txt')).toBe('a\nc');
  });

  it('tolerates wrong hunk counts and a blank context line without its space', async () => {
    await put('a.txt', 'a\n\nb\nc\n');
    await tool.execute(
      { patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1,9 +1,9 @@\n a\n\n-b\n+B\n c\n\n' },
      toolContext(config),
    );
    expect(await read('a.txt')).toBe('a\n\nB\nc\n');
  });

  it('refuses a patch that reaches outside the workspace', async () => {
    await writeFile(join(ws.outside, 'x.txt'), 'x\n');
    await symlink(ws.outside, join(ws.root, 'out'));
    const message = await toolErrorOf(
      tool.execute(
        { patch: '--- a/out/x.txt\n+++ b/out/x.txt\n@@ -1 +1 @@\n-x\n+pwned\n' },
        toolContext(config),
      ),
      'CONFLICT',
    );
    expect(message).toMatch(/symbolic link leads outside/);
    await toolErrorOf(
      tool.execute({ patch: '--- /dev/null\n+++ b/../escape.txt\n@@ -0,0 +1 @@\n+x\n' }, toolContext(config)),
      'CONFLICT',
    );
    expect(await readFile(join(ws.outside, 'x.txt'), 'utf8')).toBe('x\n');
    expect(await readdir(join(ws.outside, '..'))).not.toContain('escape.txt');
  });

  it('shows the diff that will really be applied to the person approving', async () => {
    await put('a.txt', numbered(1, 10));
    const summary = await tool.describeForApproval(
      { patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n line 5\n-line 6\n+six\n' },
      toolContext(config),
    );
    expect(summary).toContain('@@ -3,7 +3,7 @@');
    expect(summary).toContain('-line 6\n+six');
    expect(await read('a.txt')).toBe(numbered(1, 10));
  });
});

describe('parseUnifiedDiff', () => {
  it('reads plain and git-style headers, stripping a/ and b/ and timestamps', () => {
    const files = parseUnifiedDiff(
      '--- a/x.txt\t2024-01-01 00:00:00\n+++ b/x.txt\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n',
    );
    expect(files).toEqual([
      {
        oldPath: 'x.txt',
        newPath: 'x.txt',
        hunks: [
          {
            oldStart: 1,
            oldLines: 1,
            newLines: 1,
            header: '@@ -1 +1 @@',
            lines: [
              { op: '-', text: 'a', noNewline: false },
              { op: '+', text: 'b', noNewline: false },
            ],
          },
        ],
      },
    ]);
  });

  it('keeps paths without a/ b/ prefixes as they are', () => {
    expect(parseUnifiedDiff('--- src/x.txt\n+++ src/x.txt\n@@ -1 +1 @@\n-a\n+b\n')[0]?.oldPath).toBe(
      'src/x.txt',
    );
  });

  it('names the patch line of a malformed hunk line', () => {
    expect(() => parseUnifiedDiff('--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n*b\n c\n')).toThrow(
      /patch line 5: "\*b" is not a hunk line/,
    );
  });

  it('refuses text with no file changes', () => {
    try {
      parseUnifiedDiff('just some prose');
      throw new Error('expected a ToolError');
    } catch (err) {
      expect(err).toBeInstanceOf(ToolError);
      expect((err as ToolError).code).toBe('INVALID_ARGUMENTS');
    }
  });

  it('does not swallow the next file when a hunk count is too large', () => {
    const files = parseUnifiedDiff(
      '--- a/x\n+++ b/x\n@@ -1,5 +1,5 @@\n-a\n+b\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-c\n+d\n',
    );
    expect(files.map((file) => file.newPath)).toEqual(['x', 'y']);
  });
});
