import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { toWorkspaceRelative } from '../../src/tools/fs/workspace-paths';
import { openInWorkspace, resolveInWorkspace } from '../../src/tools/path-guard';
import type { ToolErrorCode } from '../../src/tools/tool';
import { makeWorkspace, toolErrorOf, type TempWorkspace } from './support/tool-fixtures';

describe('resolveInWorkspace', () => {
  let ws: TempWorkspace;

  beforeAll(async () => {
    ws = await makeWorkspace();
    await mkdir(join(ws.root, 'src'));
    await writeFile(join(ws.root, 'src', 'a.txt'), 'a');
    await writeFile(join(ws.outside, 'secret.txt'), 'secret');
    await symlink(join(ws.outside, 'secret.txt'), join(ws.root, 'link-to-file'));
    await symlink(ws.outside, join(ws.root, 'link-to-dir'));
    await symlink(join(ws.root, 'src'), join(ws.root, 'inside-link'));
    await symlink(join(ws.outside, 'missing.txt'), join(ws.root, 'dangling-out'));
    await mkdir(join(ws.root, 'nested'));
    await symlink(ws.outside, join(ws.root, 'nested', 'parent-link'));
    await symlink('../src', join(ws.root, 'nested', 'up-link'));
    await symlink('../../outside/secret.txt', join(ws.root, 'nested', 'climbing-link'));
    await symlink('loop-b', join(ws.root, 'loop-a'));
    await symlink('loop-a', join(ws.root, 'loop-b'));
    execFileSync('mkfifo', [join(ws.root, 'pipe')]);
  });

  afterAll(() => ws.cleanup());

  const hostile: [string, (ws: TempWorkspace) => string, ToolErrorCode][] = [
    ['a path that climbs out with ..', () => '..', 'PERMISSION_DENIED'],
    ['../../etc/passwd', () => '../../etc/passwd', 'PERMISSION_DENIED'],
    ['a path that climbs out after going in', () => 'src/../../outside/secret.txt', 'PERMISSION_DENIED'],
    ['an absolute path outside the root', () => '/etc/passwd', 'PERMISSION_DENIED'],
    ['a symlink to a file outside', () => 'link-to-file', 'PERMISSION_DENIED'],
    ['a symlink to a folder outside', () => 'link-to-dir', 'PERMISSION_DENIED'],
    ['a file reached through a symlinked folder', () => 'link-to-dir/secret.txt', 'PERMISSION_DENIED'],
    ['a file below a symlinked parent folder', () => 'nested/parent-link/secret.txt', 'PERMISSION_DENIED'],
    [
      'an absolute path through a symlink that leads out',
      (w) => join(w.root, 'link-to-dir', 'secret.txt'),
      'PERMISSION_DENIED',
    ],
    ['a relative symlink that climbs out of the root', () => 'nested/climbing-link', 'PERMISSION_DENIED'],
    ['symlinks that loop', () => 'loop-a/x', 'PERMISSION_DENIED'],
    ['a FIFO', () => 'pipe', 'PERMISSION_DENIED'],
    ['a device file reached by absolute path', () => '/dev/null', 'PERMISSION_DENIED'],
    ['a NUL byte', () => 'src/a.txt\0.png', 'INVALID_ARGUMENTS'],
    ['an empty path', () => '', 'INVALID_ARGUMENTS'],
    ['a missing file', () => 'src/nope.txt', 'NOT_FOUND'],
  ];

  it.each(hostile)('refuses %s', async (_name, path, code) => {
    await toolErrorOf(resolveInWorkspace(ws.root, path(ws)), code);
  });

  it('says clearly that a symlink leads outside the workspace', async () => {
    const message = await toolErrorOf(
      resolveInWorkspace(ws.root, 'link-to-dir/secret.txt'),
      'PERMISSION_DENIED',
    );
    expect(message).toMatch(/symbolic link leads outside the workspace/);
  });

  it('accepts a file whose name starts with two dots (path segments, not prefixes)', async () => {
    await writeFile(join(ws.root, '..data'), 'legit');
    await mkdir(join(ws.root, '..cache'), { recursive: true });
    await expect(resolveInWorkspace(ws.root, '..data')).resolves.toBe(join(ws.root, '..data'));
    await expect(resolveInWorkspace(ws.root, '..cache/new.txt', { allowCreate: true })).resolves.toBe(
      join(ws.root, '..cache', 'new.txt'),
    );
  });

  it('accepts a relative path and returns the real path', async () => {
    await expect(resolveInWorkspace(ws.root, 'src/a.txt')).resolves.toBe(join(ws.root, 'src', 'a.txt'));
  });

  it('accepts an absolute path inside the root', async () => {
    await expect(resolveInWorkspace(ws.root, join(ws.root, 'src', 'a.txt'))).resolves.toBe(
      join(ws.root, 'src', 'a.txt'),
    );
  });

  it('resolves .. that stays inside the root', async () => {
    await expect(resolveInWorkspace(ws.root, 'src/../src/./a.txt')).resolves.toBe(
      join(ws.root, 'src', 'a.txt'),
    );
  });

  it('follows a symlink that stays inside the root to its real path', async () => {
    await expect(resolveInWorkspace(ws.root, 'inside-link/a.txt')).resolves.toBe(
      join(ws.root, 'src', 'a.txt'),
    );
  });

  it('follows a relative symlink that climbs with .. but stays inside the root', async () => {
    await expect(resolveInWorkspace(ws.root, 'nested/up-link/a.txt')).resolves.toBe(
      join(ws.root, 'src', 'a.txt'),
    );
  });

  it('accepts the root itself', async () => {
    await expect(resolveInWorkspace(ws.root, '.')).resolves.toBe(ws.root);
  });

  it('accepts a path to be created below a missing folder when allowCreate is set', async () => {
    await expect(resolveInWorkspace(ws.root, 'new/deep/file.txt', { allowCreate: true })).resolves.toBe(
      join(ws.root, 'new', 'deep', 'file.txt'),
    );
  });

  it('refuses to create through a symlinked folder that leads out', async () => {
    await toolErrorOf(
      resolveInWorkspace(ws.root, 'link-to-dir/new.txt', { allowCreate: true }),
      'PERMISSION_DENIED',
    );
  });

  it('refuses to create through a dangling symlink that would write outside', async () => {
    const message = await toolErrorOf(
      resolveInWorkspace(ws.root, 'dangling-out', { allowCreate: true }),
      'PERMISSION_DENIED',
    );
    expect(message).toMatch(/symbolic link/);
  });

  it('refuses to create below a file', async () => {
    await toolErrorOf(
      resolveInWorkspace(ws.root, 'src/a.txt/child', { allowCreate: true }),
      'INVALID_ARGUMENTS',
    );
  });

  it('refuses to create outside the root', async () => {
    await toolErrorOf(
      resolveInWorkspace(ws.root, '../outside/new.txt', { allowCreate: true }),
      'PERMISSION_DENIED',
    );
  });

  it('reports a missing workspace root as NOT_FOUND', async () => {
    await toolErrorOf(resolveInWorkspace(join(ws.root, 'no-such-root'), 'a.txt'), 'NOT_FOUND');
  });

  describe('openInWorkspace', () => {
    it('opens the real file a path names, and judges the open file', async () => {
      const opened = await openInWorkspace(ws.root, 'inside-link/a.txt');
      try {
        expect(opened.path).toBe(join(ws.root, 'src', 'a.txt'));
        expect(opened.stats.isFile()).toBe(true);
        expect(await opened.handle.readFile('utf8')).toBe('a');
      } finally {
        await opened.handle.close();
      }
    });

    it.each([
      ['a symlink to a file outside', 'link-to-file', 'PERMISSION_DENIED'],
      ['a FIFO (without waiting for a writer)', 'pipe', 'PERMISSION_DENIED'],
      ['a device file', '/dev/null', 'PERMISSION_DENIED'],
      ['a missing file', 'src/nope.txt', 'NOT_FOUND'],
    ] as const)('refuses %s', async (_name, path, code) => {
      await toolErrorOf(openInWorkspace(ws.root, path), code);
    });

    // Opening looks at its last name differently (it opens it, then judges the open file).
    it.each(hostile)('refuses %s, as resolving does', async (_name, path, code) => {
      await toolErrorOf(openInWorkspace(ws.root, path(ws)), code);
    });

    it('refuses a socket in the workspace (which refuses to be opened) as a socket', async () => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(join(ws.root, 'sock'), resolve));
      try {
        const message = await toolErrorOf(openInWorkspace(ws.root, 'sock'), 'PERMISSION_DENIED');
        expect(message).toMatch(/is a socket/);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it.each([
      ['the root itself', '.', ''],
      ['a folder', 'src', 'src'],
      ['a folder through a link inside', 'inside-link', 'src'],
    ])('opens %s as a folder', async (_name, path, real) => {
      const opened = await openInWorkspace(ws.root, path);
      try {
        expect(opened.path).toBe(join(ws.root, real));
        expect(opened.stats.isDirectory()).toBe(true);
      } finally {
        await opened.handle.close();
      }
    });
  });

  it('shows paths relative to the root with / separators', () => {
    expect(toWorkspaceRelative(ws.root, join(ws.root, 'src', 'a.txt'))).toBe('src/a.txt');
    expect(toWorkspaceRelative(ws.root, ws.root)).toBe('.');
  });
});
