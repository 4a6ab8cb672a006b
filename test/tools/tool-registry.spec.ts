import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ConfigModule } from '../../src/config/config.module';
import type { AppConfig } from '../../src/config/app-config';
import { AgentTool } from '../../src/tools/agent-tool.decorator';
import { validateJsonSchema } from '../../src/tools/json-schema';
import type { Tool, ToolResult } from '../../src/tools/tool';
import { ToolRegistry } from '../../src/tools/tool-registry.service';
import { ToolsModule } from '../../src/tools/tools.module';
import { makeWorkspace, testConfig, type TempWorkspace } from './support/tool-fixtures';

const BUILT_INS = [
  'apply_patch',
  'cancel_command',
  'delegate',
  'edit_file',
  'get_command_output',
  'glob',
  'list_directory',
  'read_file',
  'run_command',
  'search_files',
  'write_file',
];

async function registryWith(config: AppConfig, extra: unknown[] = []): Promise<ToolRegistry> {
  const moduleRef = await Test.createTestingModule({
    imports: [ConfigModule.forRoot(config), ToolsModule, ...(extra as never[])],
  }).compile();
  await moduleRef.init();
  return moduleRef.get(ToolRegistry);
}

@Injectable()
@AgentTool()
class EchoTool implements Tool {
  readonly name: string = 'echo';
  readonly kind = 'read';
  readonly description = 'Echo';
  readonly parameters = {
    type: 'object',
    properties: { text: { type: 'string' } },
    required: ['text'],
    additionalProperties: false,
  };
  async execute(args: Record<string, unknown>): Promise<ToolResult> {
    return { content: String(args.text) };
  }
}

@Module({ providers: [EchoTool] })
class EchoModule {}

@Injectable()
@AgentTool()
class ClashingTool extends EchoTool {
  override readonly name = 'read_file';
}

@Module({ providers: [ClashingTool] })
class ClashingModule {}

describe('ToolRegistry', () => {
  let ws: TempWorkspace;
  beforeAll(async () => {
    ws = await makeWorkspace();
  });
  afterAll(() => ws.cleanup());

  it('discovers every built-in tool at start-up', async () => {
    const registry = await registryWith(testConfig(ws.root));
    expect(
      registry
        .all()
        .map((tool) => tool.name)
        .sort(),
    ).toEqual(BUILT_INS);
  });

  it('discovers a tool added in another module with @AgentTool()', async () => {
    const registry = await registryWith(testConfig(ws.root), [EchoModule]);
    expect(registry.get('echo')?.kind).toBe('read');
  });

  it('refuses to start with two tools of the same name', async () => {
    await expect(registryWith(testConfig(ws.root), [ClashingModule])).rejects.toThrow(/read_file/);
  });

  it('leaves run_command out of the enabled tools unless ENABLE_RUN_COMMAND is true', async () => {
    const off = await registryWith(testConfig(ws.root));
    expect(off.enabled().map((tool) => tool.name)).not.toContain('run_command');
    const on = await registryWith(testConfig(ws.root, { enableRunCommand: true }));
    expect(on.enabled().map((tool) => tool.name)).toContain('run_command');
  });

  it('lists the catalog with each tool’s policy for the mode and the operator overrides', async () => {
    const registry = await registryWith(
      testConfig(ws.root, { enableRunCommand: true, toolPolicy: { write_file: 'allow' } }),
    );
    const policies = Object.fromEntries(registry.catalog('safe').map((entry) => [entry.name, entry.policy]));
    expect(policies).toMatchObject({
      read_file: 'allow',
      write_file: 'allow',
      edit_file: 'confirm',
      run_command: 'deny',
    });
  });

  it('gives every built-in a strict JSON Schema a model can follow', async () => {
    const registry = await registryWith(testConfig(ws.root));
    for (const tool of registry.all()) {
      expect(validateJsonSchema(tool.parameters)).toEqual({ ok: true });
      expect(tool.parameters).toMatchObject({ type: 'object', additionalProperties: false });
      expect(tool.description.length).toBeGreaterThan(40);
    }
  });

  describe('validateArguments', () => {
    let registry: ToolRegistry;
    beforeAll(async () => {
      registry = await registryWith(testConfig(ws.root));
    });

    it('accepts valid arguments', () => {
      expect(registry.validateArguments('read_file', { path: 'a.txt', start_line: 2 })).toEqual({ ok: true });
    });

    it('names the field of the wrong type', () => {
      expect(registry.validateArguments('read_file', { path: 42 })).toEqual({
        ok: false,
        message: 'path: must be string',
      });
    });

    it('names a missing required field', () => {
      expect(registry.validateArguments('read_file', {})).toEqual({
        ok: false,
        message: 'path: is required',
      });
    });

    it('names an unknown field', () => {
      expect(registry.validateArguments('read_file', { path: 'a', colour: 'red' })).toEqual({
        ok: false,
        message: 'colour: is not a known parameter',
      });
    });

    it('reports every problem at once', () => {
      const check = registry.validateArguments('read_file', { start_line: 0 });
      expect(check.ok).toBe(false);
      expect(!check.ok && check.message).toMatch(/path: is required.*start_line: must be >= 1/);
    });

    it('does not coerce types', () => {
      expect(registry.validateArguments('read_file', { path: 'a', start_line: '2' }).ok).toBe(false);
    });

    it('answers for an unknown tool', () => {
      expect(registry.validateArguments('nope', {})).toEqual({
        ok: false,
        message: 'There is no tool named nope.',
      });
    });
  });
});

describe('validateJsonSchema', () => {
  it('accepts an object schema', () => {
    expect(validateJsonSchema({ type: 'object', properties: { q: { type: 'string' } } })).toEqual({
      ok: true,
    });
  });

  it('refuses a schema that is not an object schema', () => {
    expect(validateJsonSchema({ type: 'string' }).ok).toBe(false);
    expect(validateJsonSchema('nope').ok).toBe(false);
  });

  it('refuses an invalid schema with a message', () => {
    const check = validateJsonSchema({ type: 'object', properties: { q: { type: 'strang' } } });
    expect(check.ok).toBe(false);
  });

  it('accepts the same $id twice (client schemas are not kept)', () => {
    const schema = { $id: 'https://example.com/s', type: 'object' };
    expect(validateJsonSchema(schema)).toEqual({ ok: true });
    expect(validateJsonSchema({ ...schema })).toEqual({ ok: true });
  });
});
