import { mkdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ReadFileTool } from '../../src/tools/builtin/read-file.tool';
import { Workspaces } from '../../src/tools/workspaces';
import { makeWorkspace, testConfig, toolContext, type TempWorkspace } from './support/tool-fixtures';

describe('Workspaces', () => {
  let ws: TempWorkspace;
  beforeEach(async () => {
    ws = await makeWorkspace();
  });
  afterEach(() => ws.cleanup());

  it("gives a session's folder as its real path when WORKSPACE_ROOT is a symlink, and tools work in it", async () => {
    const linked = join(ws.outside, 'linked-root');
    await symlink(ws.root, linked);
    const workspaces = new Workspaces({ workspaceRoot: linked, workspaceScope: 'session' });

    const folder = await workspaces.forSession('alice', 's1');

    expect(folder).toBe(join(ws.root, 'alice', 's1'));
    await writeFile(join(folder, 'notes.txt'), 'hello\n');
    await mkdir(join(folder, 'sub'));
    await symlink(join(ws.root, 'secret.txt'), join(folder, 'sub', 'up.txt'));
    await writeFile(join(ws.root, 'secret.txt'), 'not yours\n');
    const ctx = { ...toolContext(testConfig(ws.root)), workspaceRoot: folder };
    const tool = new ReadFileTool();
    await expect(tool.execute({ path: 'notes.txt' }, ctx)).resolves.toEqual({ content: 'hello\n' });
    // Another session's (or the key's) files stay out of reach, whichever spelling leads there.
    await expect(tool.execute({ path: 'sub/up.txt' }, ctx)).rejects.toMatchObject({
      code: 'PERMISSION_DENIED',
    });
    await expect(tool.execute({ path: join(linked, 'secret.txt') }, ctx)).rejects.toMatchObject({
      code: 'PERMISSION_DENIED',
    });
  });

  it('makes a missing folder, finds it there the next time, and makes it again once removed', async () => {
    const workspaces = new Workspaces({ workspaceRoot: ws.root, workspaceScope: 'key' });
    const folder = await workspaces.forSession('bob', 's1');
    expect(folder).toBe(join(ws.root, 'bob'));
    expect((await stat(folder)).isDirectory()).toBe(true);
    await writeFile(join(folder, 'kept.txt'), 'kept\n');
    await expect(workspaces.forSession('bob', 's2')).resolves.toBe(folder);
    expect((await stat(join(folder, 'kept.txt'))).isFile()).toBe(true);
    await rm(folder, { recursive: true });
    await expect(workspaces.forSession('bob', 's3')).resolves.toBe(folder);
    expect((await stat(folder)).isDirectory()).toBe(true);
  });
});
