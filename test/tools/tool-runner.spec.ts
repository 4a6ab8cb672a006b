import { Test } from '@nestjs/testing';
import { ConfigModule } from '../../src/config/config.module';
import type { AppConfig } from '../../src/config/app-config';
import { ToolError, type Tool, type ToolContext, type ToolResult } from '../../src/tools/tool';
import { ToolRunner } from '../../src/tools/tool-runner.service';
import { ToolsModule } from '../../src/tools/tools.module';
import { makeWorkspace, testConfig, type TempWorkspace } from './support/tool-fixtures';

function fakeTool(
  execute: (args: Record<string, unknown>, ctx: ToolContext) => Promise<ToolResult>,
  extra: Partial<Tool> = {},
): Tool {
  return {
    name: 'fake',
    description: 'A tool for tests',
    kind: 'read',
    parameters: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false },
    execute,
    ...extra,
  };
}

const call = { runId: 'run-1', sessionId: 'session-1', toolCallId: 'call-1' };

describe('ToolRunner', () => {
  let ws: TempWorkspace;
  let config: AppConfig;
  let runner: ToolRunner;

  beforeAll(async () => {
    ws = await makeWorkspace();
    config = testConfig(ws.root, { toolTimeoutMs: 200, toolOutputMaxBytes: 1024 });
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(config), ToolsModule],
    }).compile();
    await moduleRef.init();
    runner = moduleRef.get(ToolRunner);
  });
  afterAll(() => ws.cleanup());

  it('returns what the tool returns', async () => {
    const result = await runner.run(
      fakeTool(async () => ({ content: 'ok' })),
      {},
      call,
    );
    expect(result).toEqual({ content: 'ok' });
  });

  it('replaces U+0000 and lone surrogates in results and live output with U+FFFD, and caps after', async () => {
    const chunks: string[] = [];
    const result = await runner.run(
      fakeTool(async (_args, ctx) => {
        ctx.emitOutput('stdout', 'out\u0000put\ud800');
        return { content: 'a\u0000b\udc00c 😀' };
      }),
      {},
      { ...call, emitOutput: (_stream, chunk) => chunks.push(chunk) },
    );
    expect(result).toEqual({ content: 'a\uFFFDb\uFFFDc 😀' });
    expect(chunks).toEqual(['out\uFFFDput\uFFFD']);
    const long = await runner.run(
      fakeTool(async () => ({ content: '\u0000'.repeat(1000) })),
      {},
      call,
    );
    expect(long.truncated).toBe(true);
    expect(long.content).not.toContain('\u0000');
    expect(Buffer.byteLength(long.content)).toBeLessThanOrEqual(1024);
  });

  it('names an unknown tool in storable text, whatever the model called it', async () => {
    const result = await runner.runCall('no\u0000such\ud800', '{}', call);
    expect(result).toMatchObject({ isError: true, errorCode: 'UNKNOWN_TOOL' });
    expect(result.content).toContain('no\uFFFDsuch\uFFFD');
  });

  it('answers arguments nested more than 64 levels with INVALID_ARGUMENTS', async () => {
    const deep = `{"n":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    const result = await runner.runCall('read_file', deep, call);
    expect(result).toMatchObject({ isError: true, errorCode: 'INVALID_ARGUMENTS' });
    expect(result.content).toContain('64 levels');
  });

  it('aborts a tool that exceeds its timeout through its signal and returns TIMEOUT', async () => {
    let sawAbort = false;
    const slow = fakeTool(
      (_args, ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => {
            sawAbort = true;
            reject(new Error('aborted'));
          });
        }),
    );
    const result = await runner.run(slow, {}, call);
    expect(sawAbort).toBe(true);
    expect(result).toMatchObject({ isError: true, errorCode: 'TIMEOUT' });
    expect(result.content).toMatch(/did not finish within 0\.2 s/);
  });

  it('uses the timeout the tool asks for', async () => {
    const slow = fakeTool(
      (_args, ctx) =>
        new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('x')))),
      {
        timeoutMs: () => 50,
      },
    );
    const result = await runner.run(slow, {}, call);
    expect(result).toMatchObject({ errorCode: 'TIMEOUT' });
    expect(result.content).toMatch(/did not finish within 0\.1 s/);
  });

  it('does not hang on a tool that ignores its signal', async () => {
    const stubborn = fakeTool(() => new Promise<ToolResult>(() => undefined));
    // Were the runner to wait for the tool, this would never return (and the test would time out).
    const result = await runner.run(stubborn, {}, call);
    expect(result).toMatchObject({ isError: true, errorCode: 'TIMEOUT' });
  });

  it('keeps a result a tool returns after its abort (e.g. partial output)', async () => {
    const polite = fakeTool(
      (_args, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener('abort', () =>
            resolve({ content: 'partial', isError: true, errorCode: 'TIMEOUT' }),
          );
        }),
    );
    expect(await runner.run(polite, {}, call)).toEqual({
      content: 'partial',
      isError: true,
      errorCode: 'TIMEOUT',
    });
  });

  it('turns a thrown error into EXECUTION_ERROR naming the tool', async () => {
    const broken = fakeTool(async () => {
      throw new Error('disk on fire');
    });
    expect(await runner.run(broken, {}, call)).toEqual({
      content: 'fake failed: disk on fire',
      isError: true,
      errorCode: 'EXECUTION_ERROR',
    });
  });

  it('keeps the code and message of a ToolError', async () => {
    const refusing = fakeTool(async () => {
      throw new ToolError('NOT_FOUND', 'x.txt: no such file');
    });
    expect(await runner.run(refusing, {}, call)).toEqual({
      content: 'x.txt: no such file',
      isError: true,
      errorCode: 'NOT_FOUND',
    });
  });

  it('maps a file-system error to its code and hides the workspace path', async () => {
    const failing = fakeTool(async (_args, ctx) => {
      const err = Object.assign(
        new Error(`ENOENT: no such file or directory, open '${ctx.workspaceRoot}/gone.txt'`),
        { code: 'ENOENT' },
      );
      throw err;
    });
    const result = await runner.run(failing, {}, { ...call, workspaceRoot: ws.root });
    expect(result).toMatchObject({ isError: true, errorCode: 'NOT_FOUND' });
    expect(result.content).toContain("'gone.txt'");
    expect(result.content).not.toContain(ws.root);
  });

  it('caps the content at TOOL_OUTPUT_MAX_BYTES with a marker and the full size', async () => {
    const chatty = fakeTool(async () => ({ content: 'x'.repeat(5000) }));
    const result = await runner.run(chatty, {}, call);
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.content)).toBeLessThanOrEqual(1024);
    expect(result.content).toMatch(/\[truncated: showing \d+ of 5000 bytes\]$/);
  });

  it('does not split a multi-byte character when capping', async () => {
    const result = await runner.run(
      fakeTool(async () => ({ content: 'é'.repeat(3000) })),
      {},
      call,
    );
    expect(result.content).not.toContain('\uFFFD');
  });

  it('gives CANCELLED when the run is cancelled', async () => {
    const parent = new AbortController();
    const waiting = fakeTool(
      (_args, ctx) =>
        new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('x')))),
    );
    const pending = runner.run(waiting, {}, { ...call, parentSignal: parent.signal });
    setTimeout(() => parent.abort(), 20);
    expect(await pending).toMatchObject({ isError: true, errorCode: 'CANCELLED' });
  });

  it('does not start a tool when the run is already cancelled', async () => {
    const parent = new AbortController();
    parent.abort();
    const execute = jest.fn(async () => ({ content: 'ran' }));
    expect(await runner.run(fakeTool(execute), {}, { ...call, parentSignal: parent.signal })).toMatchObject({
      errorCode: 'CANCELLED',
    });
    expect(execute).not.toHaveBeenCalled();
  });

  it('refuses arguments that break the schema with INVALID_ARGUMENTS naming the field', async () => {
    const result = await runner.run(
      fakeTool(async () => ({ content: 'ran' })),
      { n: 'three' },
      call,
    );
    expect(result).toEqual({
      content: 'Invalid arguments for fake: n: must be integer',
      isError: true,
      errorCode: 'INVALID_ARGUMENTS',
    });
  });

  describe('runCall', () => {
    it('answers UNKNOWN_TOOL for a name that is not registered, listing the tools', async () => {
      const result = await runner.runCall('delete_everything', '{}', call);
      expect(result).toMatchObject({ isError: true, errorCode: 'UNKNOWN_TOOL' });
      expect(result.content).toMatch(/read_file/);
    });

    it('treats a disabled tool as unknown', async () => {
      expect(await runner.runCall('run_command', '{"command":"true"}', call)).toMatchObject({
        errorCode: 'UNKNOWN_TOOL',
      });
    });

    it('answers INVALID_ARGUMENTS for arguments that are not JSON', async () => {
      const result = await runner.runCall('read_file', '{"path": "a.txt"', call);
      expect(result).toMatchObject({ isError: true, errorCode: 'INVALID_ARGUMENTS' });
      expect(result.content).toMatch(/not valid JSON/);
    });

    it('answers INVALID_ARGUMENTS for JSON that is not an object', async () => {
      expect(await runner.runCall('read_file', '["a.txt"]', call)).toMatchObject({
        errorCode: 'INVALID_ARGUMENTS',
      });
    });

    it('names the field that breaks the schema', async () => {
      const result = await runner.runCall('read_file', '{"path": 7}', call);
      expect(result.content).toBe('Invalid arguments for read_file: path: must be string');
    });

    it('runs a registered tool in the configured workspace', async () => {
      const result = await runner.runCall('list_directory', '', call);
      expect(result).toEqual({ content: '.: (empty folder)' });
    });
  });
});
