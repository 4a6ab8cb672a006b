import { createHash } from 'node:crypto';
import { chmod, mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppConfig } from '../../src/config/app-config';
import { EditFileTool } from '../../src/tools/builtin/edit-file.tool';
import { WriteFileTool } from '../../src/tools/builtin/write-file.tool';
import {
  makeWorkspace,
  testConfig,
  toolContext,
  toolErrorOf,
  type TempWorkspace,
} from './support/tool-fixtures';

const sha = (data: string) => createHash('sha256').update(data).digest('hex');

describe('write tools', () => {
  let ws: TempWorkspace;
  let config: AppConfig;
  const read = (path: string) => readFile(join(ws.root, path), 'utf8');
  const put = (path: string, content: string) => writeFile(join(ws.root, path), content);

  beforeEach(async () => {
    ws = await makeWorkspace();
    config = testConfig(ws.root);
  });
  afterEach(() => ws.cleanup());

  describe('write_file', () => {
    const tool = new WriteFileTool();

    it('creates a file and its folders, reporting bytes and sha256', async () => {
      const result = await tool.execute({ path: 'a/b/new.txt', content: 'héllo\n' }, toolContext(config));
      expect(await read('a/b/new.txt')).toBe('héllo\n');
      expect(result.content).toBe(`Created a/b/new.txt: wrote 7 bytes (sha256 ${sha('héllo\n')}).`);
      expect(result.changes).toEqual([
        { path: 'a/b/new.txt', beforeSha256: null, afterSha256: sha('héllo\n') },
      ]);
    });

    it('refuses to overwrite unless asked', async () => {
      await put('x.txt', 'old');
      const message = await toolErrorOf(
        tool.execute({ path: 'x.txt', content: 'new' }, toolContext(config)),
        'CONFLICT',
      );
      expect(message).toMatch(/overwrite/);
      expect(await read('x.txt')).toBe('old');
    });

    it('overwrites when asked, reporting before and after hashes', async () => {
      await put('x.txt', 'old');
      const result = await tool.execute(
        { path: 'x.txt', content: 'new', overwrite: true },
        toolContext(config),
      );
      expect(await read('x.txt')).toBe('new');
      expect(result.changes).toEqual([{ path: 'x.txt', beforeSha256: sha('old'), afterSha256: sha('new') }]);
    });

    it('keeps CRLF line endings of the file it replaces', async () => {
      await put('win.txt', 'one\r\ntwo\r\n');
      await tool.execute({ path: 'win.txt', content: 'uno\ndos\n', overwrite: true }, toolContext(config));
      expect(await read('win.txt')).toBe('uno\r\ndos\r\n');
    });

    it('keeps the permissions of the file it replaces', async () => {
      await put('run.sh', 'echo 1\n');
      await chmod(join(ws.root, 'run.sh'), 0o755);
      await tool.execute({ path: 'run.sh', content: 'echo 2\n', overwrite: true }, toolContext(config));
      expect((await stat(join(ws.root, 'run.sh'))).mode & 0o777).toBe(0o755);
    });

    it('writes through a temporary file and leaves none behind', async () => {
      await tool.execute({ path: 'clean.txt', content: 'x' }, toolContext(config));
      expect(await readdir(ws.root)).toEqual(['clean.txt']);
    });

    it('refuses to write through a symlink leading outside', async () => {
      await symlink(ws.outside, join(ws.root, 'out'));
      await toolErrorOf(
        tool.execute({ path: 'out/evil.txt', content: 'x' }, toolContext(config)),
        'PERMISSION_DENIED',
      );
      expect(await readdir(ws.outside)).toEqual([]);
    });

    it('shows the diff to the person approving', async () => {
      await put('x.txt', 'a\nb\n');
      const summary = await tool.describeForApproval(
        { path: 'x.txt', content: 'a\nc\n', overwrite: true },
        toolContext(config),
      );
      expect(summary).toContain('--- a/x.txt\n+++ b/x.txt');
      expect(summary).toContain('-b\n+c');
    });

    it('says in the approval text when the call will fail', async () => {
      await put('x.txt', 'a');
      expect(await tool.describeForApproval({ path: 'x.txt', content: 'b' }, toolContext(config))).toMatch(
        /This call will fail: x.txt: already exists/,
      );
    });
  });

  describe('edit_file', () => {
    const tool = new EditFileTool();

    it('replaces text that occurs once and reports the change', async () => {
      await put('a.ts', 'const a = 1;\nconst b = 2;\n');
      const result = await tool.execute(
        { path: 'a.ts', old_text: 'const b = 2;', new_text: 'const b = 3;' },
        toolContext(config),
      );
      expect(await read('a.ts')).toBe('const a = 1;\nconst b = 3;\n');
      expect(result.content).toBe('Replaced 1 occurrence in a.ts (line 2).');
      expect(result.changes).toEqual([
        {
          path: 'a.ts',
          beforeSha256: sha('const a = 1;\nconst b = 2;\n'),
          afterSha256: sha('const a = 1;\nconst b = 3;\n'),
        },
      ]);
    });

    it('takes the replacement literally ($& is not special)', async () => {
      await put('a.txt', 'price\n');
      await tool.execute({ path: 'a.txt', old_text: 'price', new_text: '$& $1 $$' }, toolContext(config));
      expect(await read('a.txt')).toBe('$& $1 $$\n');
    });

    it('edits a CRLF file with LF text and keeps it CRLF', async () => {
      await put('win.txt', 'one\r\ntwo\r\nthree\r\n');
      await tool.execute(
        { path: 'win.txt', old_text: 'one\ntwo\n', new_text: 'one\n2\nextra\n' },
        toolContext(config),
      );
      expect(await read('win.txt')).toBe('one\r\n2\r\nextra\r\nthree\r\n');
    });

    it('refuses ambiguous text, giving the lines where it occurs', async () => {
      await put('a.ts', 'x();\ny();\nx();\n');
      const message = await toolErrorOf(
        tool.execute({ path: 'a.ts', old_text: 'x();', new_text: 'z();' }, toolContext(config)),
        'CONFLICT',
      );
      expect(message).toMatch(/occurs 2 times in a.ts \(lines 1, 3\)/);
      expect(await read('a.ts')).toBe('x();\ny();\nx();\n');
    });

    it('replaces every occurrence with replace_all', async () => {
      await put('a.ts', 'x();\ny();\nx();\n');
      const result = await tool.execute(
        { path: 'a.ts', old_text: 'x();', new_text: 'z();', replace_all: true },
        toolContext(config),
      );
      expect(await read('a.ts')).toBe('z();\ny();\nz();\n');
      expect(result.content).toBe('Replaced 2 occurrences in a.ts (line 1, 3).');
    });

    it('refuses missing text and shows the nearest match with the first difference', async () => {
      await put('math.ts', 'export function add(a, b) {\n    return a + b;\n}\n');
      const message = await toolErrorOf(
        tool.execute(
          { path: 'math.ts', old_text: 'export function add(a, b) {\n  return a + b;\n}', new_text: 'x' },
          toolContext(config),
        ),
        'NOT_FOUND',
      );
      expect(message).toContain('The closest text is at lines 1-3');
      expect(message).toContain('    return a + b;');
      expect(message).toContain(
        'First difference, line 2: old_text has "  return a + b;" but the file has "    return a + b;"',
      );
    });

    it('finds the nearest match for a typo in a single line', async () => {
      await put('a.txt', 'alpha\nbravo charlie delta\necho\n');
      const message = await toolErrorOf(
        tool.execute({ path: 'a.txt', old_text: 'bravo charlie delto', new_text: 'x' }, toolContext(config)),
        'NOT_FOUND',
      );
      expect(message).toContain('lines 2-2');
    });

    it('refuses a binary file', async () => {
      await writeFile(join(ws.root, 'bin'), Buffer.from([1, 0, 2]));
      await toolErrorOf(
        tool.execute({ path: 'bin', old_text: 'a', new_text: 'b' }, toolContext(config)),
        'INVALID_ARGUMENTS',
      );
    });

    it('refuses to edit outside the workspace', async () => {
      await writeFile(join(ws.outside, 'x.txt'), 'a');
      await mkdir(join(ws.root, 'd'));
      await symlink(join(ws.outside, 'x.txt'), join(ws.root, 'd', 'x.txt'));
      await toolErrorOf(
        tool.execute({ path: 'd/x.txt', old_text: 'a', new_text: 'b' }, toolContext(config)),
        'PERMISSION_DENIED',
      );
      expect(await readFile(join(ws.outside, 'x.txt'), 'utf8')).toBe('a');
    });

    it('shows the diff to the person approving without changing the file', async () => {
      await put('a.ts', 'one\ntwo\n');
      const summary = await tool.describeForApproval(
        { path: 'a.ts', old_text: 'two', new_text: 'TWO' },
        toolContext(config),
      );
      expect(summary).toContain('-two\n+TWO');
      expect(await read('a.ts')).toBe('one\ntwo\n');
    });
  });
});
