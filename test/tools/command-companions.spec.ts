import { Test } from '@nestjs/testing';
import { ConfigModule } from '../../src/config/config.module';
import type { AppConfig } from '../../src/config/app-config';
import { ToolRegistry } from '../../src/tools/tool-registry.service';
import { Toolset } from '../../src/tools/toolset';
import { ToolsModule } from '../../src/tools/tools.module';
import { makeWorkspace, testConfig, type TempWorkspace } from './support/tool-fixtures';

const COMPANIONS = ['cancel_command', 'get_command_output'];

describe('get_command_output and cancel_command, the companions of run_command', () => {
  let ws: TempWorkspace;
  beforeAll(async () => {
    ws = await makeWorkspace();
  });
  afterAll(() => ws.cleanup());

  async function registryWith(config: AppConfig): Promise<ToolRegistry> {
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(config), ToolsModule],
    }).compile();
    await moduleRef.init();
    return moduleRef.get(ToolRegistry);
  }

  const offered = (toolset: Toolset) => toolset.serverToolNames.filter((n) => n !== 'run_command').sort();

  it('are offered only where run_command is: not without ENABLE_RUN_COMMAND', async () => {
    const registry = await registryWith(testConfig(ws.root));
    const names = registry.enabled().map((t) => t.name);
    for (const name of COMPANIONS) expect(names).not.toContain(name);
    expect(registry.all().map((t) => t.name)).toEqual(expect.arrayContaining(COMPANIONS));
  });

  it("come with run_command whatever a session's tools list names, and not without it", async () => {
    const config = testConfig(ws.root, { enableRunCommand: true });
    const registry = await registryWith(config);
    const withIt = new Toolset(registry, config, { mode: 'exec', tools: ['run_command'], clientTools: [] });
    expect(offered(withIt)).toEqual(COMPANIONS);
    const named = new Toolset(registry, config, {
      mode: 'exec',
      tools: ['read_file', 'get_command_output'],
      clientTools: [],
    });
    expect(named.serverToolNames).toEqual(['read_file']);
    const safe = new Toolset(registry, config, { mode: 'safe', tools: null, clientTools: [] });
    for (const name of COMPANIONS) expect(safe.lookup(name).kind).toBe('refused');
  });

  it('run without approval wherever run_command may run, even where run_command itself waits for a person', async () => {
    const config = testConfig(ws.root, { enableRunCommand: true });
    const registry = await registryWith(config);
    const exec = new Toolset(registry, config, { mode: 'exec', tools: null, clientTools: [] });
    expect(exec.lookup('run_command')).toMatchObject({ kind: 'server', policy: 'confirm' });
    for (const name of COMPANIONS)
      expect(exec.lookup(name)).toMatchObject({ kind: 'server', policy: 'allow' });
    const catalog = Object.fromEntries(registry.catalog('exec').map((t) => [t.name, t.policy]));
    expect(catalog).toMatchObject({
      run_command: 'confirm',
      get_command_output: 'allow',
      cancel_command: 'allow',
    });

    const overridden = testConfig(ws.root, { enableRunCommand: true, toolPolicy: { run_command: 'allow' } });
    const inWrite = new Toolset(await registryWith(overridden), overridden, {
      mode: 'write',
      tools: null,
      clientTools: [],
    });
    for (const name of COMPANIONS)
      expect(inWrite.lookup(name)).toMatchObject({ kind: 'server', policy: 'allow' });
  });
});
