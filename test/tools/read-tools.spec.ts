import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppConfig } from '../../src/config/app-config';
import { GlobTool } from '../../src/tools/builtin/glob.tool';
import { ListDirectoryTool } from '../../src/tools/builtin/list-directory.tool';
import { ReadFileTool } from '../../src/tools/builtin/read-file.tool';
import { SearchFilesTool } from '../../src/tools/builtin/search-files.tool';
import {
  makeWorkspace,
  testConfig,
  toolContext,
  toolErrorOf,
  type TempWorkspace,
} from './support/tool-fixtures';

describe('read tools', () => {
  let ws: TempWorkspace;
  let config: AppConfig;

  beforeAll(async () => {
    ws = await makeWorkspace();
    config = testConfig(ws.root, { readMaxBytes: 1024 });
    const file = (path: string, content: string | Buffer) => writeFile(join(ws.root, path), content);
    await mkdir(join(ws.root, 'src', 'lib'), { recursive: true });
    await mkdir(join(ws.root, 'build'));
    await mkdir(join(ws.root, '.git'));
    await mkdir(join(ws.root, '.github', 'workflows'), { recursive: true });
    await file('.gitignore', 'build/\n*.log\n');
    await file('README.md', '# Demo\nTODO: write docs\n');
    await file('src/index.ts', "import { add } from './lib/math';\nconsole.log(add(1, 2)); // TODO tidy\n");
    await file('src/lib/math.ts', 'export function add(a: number, b: number) {\n  return a + b;\n}\n');
    await file('src/lib/.hidden.ts', 'TODO hidden\n');
    await file('build/out.js', 'TODO built\n');
    await file('debug.log', 'TODO log\n');
    await file('.git/config', 'TODO git\n');
    await file('.github/workflows/ci.yml', 'name: ci\n');
    await file('image.bin', Buffer.from([0x89, 0x50, 0x00, 0x01, 0x54, 0x4f, 0x44, 0x4f]));
    await file('numbers.txt', Array.from({ length: 400 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    await mkdir(join(ws.root, 'pkg', 'gen'), { recursive: true });
    await file('pkg/.gitignore', 'gen/\n');
    await file('pkg/gen/out.txt', 'NESTEDMARK generated\n');
    await file('pkg/kept.txt', 'NESTEDMARK kept\n');
    await writeFile(join(ws.outside, 'secret.txt'), 'TODO secret\n');
    await symlink(ws.outside, join(ws.root, 'escape'));
    await symlink(join(ws.outside, 'secret.txt'), join(ws.root, 'escape.txt'));
    execFileSync('mkfifo', [join(ws.root, 'src', 'pipe')]);
  });
  afterAll(() => ws.cleanup());

  describe('list_directory', () => {
    const tool = new ListDirectoryTool();

    it('lists a folder with folders marked by /', async () => {
      const { content } = await tool.execute({}, toolContext(config));
      expect(content.split('\n')).toEqual(
        expect.arrayContaining(['README.md', 'src/', 'build/', 'numbers.txt']),
      );
      expect(content).not.toContain('src/index.ts');
    });

    it('hides dot files unless asked', async () => {
      expect((await tool.execute({}, toolContext(config))).content).not.toContain('.gitignore');
      expect((await tool.execute({ include_hidden: true }, toolContext(config))).content).toContain(
        '.gitignore',
      );
    });

    it('goes deeper on request, with paths relative to the workspace', async () => {
      const { content } = await tool.execute({ path: 'src', depth: 2 }, toolContext(config));
      expect(content.split('\n')).toEqual([
        'src/index.ts',
        'src/lib/',
        'src/lib/math.ts',
        'src/pipe (special file or broken link; not readable)',
      ]);
    });

    it('marks a symlink leading outside and does not follow it', async () => {
      const { content } = await tool.execute({ depth: 3 }, toolContext(config));
      expect(content).toContain('escape (symbolic link leading outside the workspace; not reachable)');
      expect(content).not.toContain('secret');
    });

    it('refuses to list outside the workspace', async () => {
      await toolErrorOf(tool.execute({ path: '..' }, toolContext(config)), 'PERMISSION_DENIED');
      await toolErrorOf(tool.execute({ path: 'escape' }, toolContext(config)), 'PERMISSION_DENIED');
    });

    it('says a file is not a folder', async () => {
      await toolErrorOf(tool.execute({ path: 'README.md' }, toolContext(config)), 'INVALID_ARGUMENTS');
    });
  });

  describe('read_file', () => {
    const tool = new ReadFileTool();

    it('returns a small file exactly as stored', async () => {
      expect(await tool.execute({ path: 'src/lib/math.ts' }, toolContext(config))).toEqual({
        content: 'export function add(a: number, b: number) {\n  return a + b;\n}\n',
      });
    });

    it('returns a line range and says where it is in the file', async () => {
      const { content } = await tool.execute(
        { path: 'numbers.txt', start_line: 10, end_line: 12 },
        toolContext(config),
      );
      expect(content).toBe('line 10\nline 11\nline 12\n[lines 10-12 of 400]');
    });

    it('cuts a large file at READ_MAX_BYTES on a line boundary, reporting size and line count', async () => {
      const result = await tool.execute({ path: 'numbers.txt' }, toolContext(config));
      expect(result.truncated).toBe(true);
      const body = result.content.slice(0, result.content.lastIndexOf('['));
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(1024);
      expect(body.endsWith('\n')).toBe(true);
      expect(result.content).toMatch(
        /\[truncated: showing lines 1-(\d+) of 400 \(\d+ of 3492 bytes\); read on with start_line=\d+\]$/,
      );
    });

    it('lets the model read on from where the cut was', async () => {
      const first = await tool.execute({ path: 'numbers.txt' }, toolContext(config));
      const next = Number(/start_line=(\d+)/.exec(first.content)?.[1]);
      const second = await tool.execute({ path: 'numbers.txt', start_line: next }, toolContext(config));
      expect(second.content.startsWith(`line ${next}\n`)).toBe(true);
    });

    it('cuts a single overlong line inside and says so', async () => {
      await writeFile(join(ws.root, 'long.txt'), 'é'.repeat(2000));
      const result = await tool.execute({ path: 'long.txt' }, toolContext(config));
      expect(result.content).toMatch(/line 1 is longer than the read limit/);
      expect(result.content).not.toContain('\uFFFD');
    });

    it('does not dump a binary file', async () => {
      expect((await tool.execute({ path: 'image.bin' }, toolContext(config))).content).toBe(
        'image.bin: binary file (8 bytes); its content is not shown.',
      );
    });

    it('refuses a start line past the end, giving the line count', async () => {
      const message = await toolErrorOf(
        tool.execute({ path: 'numbers.txt', start_line: 401 }, toolContext(config)),
        'INVALID_ARGUMENTS',
      );
      expect(message).toMatch(/has 400 lines/);
    });

    it('reports a missing file as NOT_FOUND', async () => {
      await toolErrorOf(tool.execute({ path: 'nope.txt' }, toolContext(config)), 'NOT_FOUND');
    });

    it('refuses a symlink to a file outside', async () => {
      await toolErrorOf(tool.execute({ path: 'escape.txt' }, toolContext(config)), 'PERMISSION_DENIED');
    });

    it('refuses a FIFO instead of blocking on it', async () => {
      await toolErrorOf(tool.execute({ path: 'src/pipe' }, toolContext(config)), 'PERMISSION_DENIED');
    });
  });

  describe('search_files', () => {
    const tool = new SearchFilesTool();

    it('finds a literal string with file:line and the line, respecting .gitignore and skipping hidden, binary and outside files', async () => {
      const { content } = await tool.execute({ query: 'TODO' }, toolContext(config));
      expect(content.split('\n').sort()).toEqual([
        'README.md:2: TODO: write docs',
        'src/index.ts:2: console.log(add(1, 2)); // TODO tidy',
      ]);
    });

    it('treats the query literally unless regex is set', async () => {
      expect((await tool.execute({ query: 'a + b' }, toolContext(config))).content).toBe(
        'src/lib/math.ts:2:   return a + b;',
      );
      expect(
        (await tool.execute({ query: 'add\\(\\d, \\d\\)', regex: true }, toolContext(config))).content,
      ).toBe('src/index.ts:2: console.log(add(1, 2)); // TODO tidy');
    });

    it('matches case-insensitively on request', async () => {
      expect(
        (await tool.execute({ query: 'todo: WRITE', case_sensitive: false }, toolContext(config))).content,
      ).toBe('README.md:2: TODO: write docs');
    });

    it('filters by a glob on the file name or the path', async () => {
      expect((await tool.execute({ query: 'TODO', glob: '*.md' }, toolContext(config))).content).toBe(
        'README.md:2: TODO: write docs',
      );
      expect(
        (await tool.execute({ query: 'return', glob: 'src/**/*.ts' }, toolContext(config))).content,
      ).toBe('src/lib/math.ts:2:   return a + b;');
    });

    it('respects a .gitignore inside a subfolder', async () => {
      expect((await tool.execute({ query: 'NESTEDMARK' }, toolContext(config))).content).toBe(
        'pkg/kept.txt:1: NESTEDMARK kept',
      );
      expect((await tool.execute({ query: 'NESTEDMARK', path: 'pkg' }, toolContext(config))).content).toBe(
        'pkg/kept.txt:1: NESTEDMARK kept',
      );
    });

    it('caps the results and says so', async () => {
      const { content, truncated } = await tool.execute(
        { query: 'line', max_results: 5 },
        toolContext(config),
      );
      expect(content.split('\n').slice(0, 5)).toEqual([
        'numbers.txt:1: line 1',
        'numbers.txt:2: line 2',
        'numbers.txt:3: line 3',
        'numbers.txt:4: line 4',
        'numbers.txt:5: line 5',
      ]);
      expect(content).toMatch(/results capped at 5 matches/);
      expect(truncated).toBe(true);
    });

    it('says when nothing matches', async () => {
      expect((await tool.execute({ query: 'no such text anywhere' }, toolContext(config))).content).toMatch(
        /^No matches for "no such text anywhere"/,
      );
    });

    it('refuses an invalid regular expression', async () => {
      await toolErrorOf(
        tool.execute({ query: '(unclosed', regex: true }, toolContext(config)),
        'INVALID_ARGUMENTS',
      );
    });

    it('stops a catastrophic regular expression when aborted without blocking the server', async () => {
      await writeFile(join(ws.root, 'redos.txt'), `${'a'.repeat(40)}!\n`);
      const controller = new AbortController();
      const ticks: number[] = [];
      const ticker = setInterval(() => ticks.push(Date.now()), 20);
      setTimeout(() => controller.abort(new Error('stop')), 300);
      await expect(
        tool.execute(
          { query: '^(a+)+$', regex: true, path: 'redos.txt' },
          toolContext(config, controller.signal),
        ),
      ).rejects.toThrow('stop');
      clearInterval(ticker);
      expect(ticks.length).toBeGreaterThan(5);
    });

    it('refuses to search outside the workspace', async () => {
      await toolErrorOf(
        tool.execute({ query: 'TODO', path: '../outside' }, toolContext(config)),
        'PERMISSION_DENIED',
      );
    });
  });

  describe('glob', () => {
    const tool = new GlobTool();

    it('lists paths matching a pattern, respecting .gitignore', async () => {
      expect((await tool.execute({ pattern: '**/*.ts' }, toolContext(config))).content).toBe(
        'src/index.ts\nsrc/lib/math.ts',
      );
      expect((await tool.execute({ pattern: '**/*.js' }, toolContext(config))).content).toBe(
        'No paths match "**/*.js".',
      );
    });

    it('marks folders with /', async () => {
      expect((await tool.execute({ pattern: 'src/*' }, toolContext(config))).content).toBe(
        'src/index.ts\nsrc/lib/',
      );
    });

    it('matches hidden paths only when the pattern names them', async () => {
      expect((await tool.execute({ pattern: '**/*.yml' }, toolContext(config))).content).toBe(
        'No paths match "**/*.yml".',
      );
      expect((await tool.execute({ pattern: '.github/**/*.yml' }, toolContext(config))).content).toBe(
        '.github/workflows/ci.yml',
      );
    });

    it('answers a literal path', async () => {
      expect((await tool.execute({ pattern: 'README.md' }, toolContext(config))).content).toBe('README.md');
    });

    it('does not follow a symlink out of the workspace', async () => {
      expect((await tool.execute({ pattern: '**/secret*' }, toolContext(config))).content).toBe(
        'No paths match "**/secret*".',
      );
      await toolErrorOf(tool.execute({ pattern: 'escape/*.txt' }, toolContext(config)), 'PERMISSION_DENIED');
    });

    it('refuses a pattern that climbs out', async () => {
      await toolErrorOf(tool.execute({ pattern: '../**/*.txt' }, toolContext(config)), 'INVALID_ARGUMENTS');
      await toolErrorOf(tool.execute({ pattern: '/etc/*' }, toolContext(config)), 'INVALID_ARGUMENTS');
    });
  });
});
