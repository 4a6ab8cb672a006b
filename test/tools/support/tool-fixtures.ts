import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type AppConfig } from '../../../src/config/app-config';
import { ToolError, type ToolContext, type ToolErrorCode } from '../../../src/tools/tool';

export interface TempWorkspace {
  /** Real path of the workspace root. */
  root: string;
  /** A folder beside the root that no tool may reach. */
  outside: string;
  cleanup(): Promise<void>;
}

export async function makeWorkspace(): Promise<TempWorkspace> {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'loopwright-tools-')));
  const root = join(base, 'workspace');
  const outside = join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  return { root, outside, cleanup: () => rm(base, { recursive: true, force: true }) };
}

export function testConfig(root: string, overrides: Partial<AppConfig> = {}): AppConfig {
  return { ...loadConfig({ WORKSPACE_ROOT: root }, root), ...overrides };
}

export interface RecordingContext extends ToolContext {
  output: { stream: 'stdout' | 'stderr'; chunk: string; at: number }[];
}

export function toolContext(
  config: AppConfig,
  signal: AbortSignal = new AbortController().signal,
): RecordingContext {
  const output: RecordingContext['output'] = [];
  return {
    workspaceRoot: config.workspaceRoot,
    signal,
    runId: 'run-1',
    sessionId: 'session-1',
    toolCallId: 'call-1',
    emitOutput: (stream, chunk) => output.push({ stream, chunk, at: Date.now() }),
    config,
    output,
  };
}

/** Awaits `promise`, expecting it to reject with a ToolError of `code`; returns the message. */
export async function toolErrorOf(promise: Promise<unknown>, code: ToolErrorCode): Promise<string> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).code).toBe(code);
    return (err as ToolError).message;
  }
  throw new Error(`expected a ToolError ${code}, but the call succeeded`);
}
