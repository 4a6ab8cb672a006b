import { Test } from '@nestjs/testing';
import { ConfigModule } from '../../src/config/config.module';
import {
  LIVE_HEAD_BYTES,
  LIVE_HEAD_CHUNKS,
  LIVE_TAIL_BYTES,
  LIVE_TAIL_CHUNKS,
  LiveOutput,
  type OutputStream,
} from '../../src/tools/live-output';
import type { Tool, ToolContext, ToolResult } from '../../src/tools/tool';
import { ToolRunner } from '../../src/tools/tool-runner.service';
import { ToolsModule } from '../../src/tools/tools.module';
import { makeWorkspace, testConfig, type TempWorkspace } from './support/tool-fixtures';

type Chunk = [OutputStream, string];

function collect(bounds = { headBytes: 10, headChunks: 100, tailBytes: 6, tailChunks: 3 }) {
  const chunks: Chunk[] = [];
  const live = new LiveOutput((stream, chunk) => chunks.push([stream, chunk]), bounds);
  return { chunks, live };
}

describe('LiveOutput (one call’s live output, bounded)', () => {
  it('passes everything on, in order, while it fits the head', () => {
    const { chunks, live } = collect();
    live.push('stdout', 'abc');
    live.push('stderr', 'def');
    live.end();
    expect(chunks).toEqual([
      ['stdout', 'abc'],
      ['stderr', 'def'],
    ]);
  });

  it('streams the head, keeps a rolling tail of both streams, and ends with what was dropped then the tail', () => {
    const { chunks, live } = collect();
    live.push('stdout', '0123456'); // 7 of the 10 head bytes
    live.push('stdout', 'abcdef'); // "abc" fills the head, "def" starts the tail
    for (let i = 0; i < 100; i++) live.push('stdout', 'xxxx');
    live.push('stderr', 'ERR');
    live.push('stdout', 'end');
    expect(chunks).toEqual([
      ['stdout', '0123456'],
      ['stdout', 'abc'],
    ]);
    live.end();
    const dropped = 3 + 400 + 3 + 3 - 6;
    expect(chunks.slice(2)).toEqual([
      ['stderr', `\n[live output cut: ${dropped} bytes dropped after the first 10; the last 6 follow]\nERR`],
      ['stdout', 'end'],
    ]);
  });

  it('bounds the head by chunks too, and the tail by chunks', () => {
    const { chunks, live } = collect({ headBytes: 1000, headChunks: 2, tailBytes: 1000, tailChunks: 2 });
    for (const piece of ['a', 'b', 'c', 'd', 'e', 'f']) live.push('stdout', piece);
    live.end();
    expect(chunks.map(([, c]) => c)).toEqual([
      'a',
      'b',
      expect.stringMatching(/2 bytes dropped.*\ne$/s),
      'f',
    ]);
  });

  it('never splits a character, at the head’s edge or in the tail', () => {
    const { chunks, live } = collect({ headBytes: 5, headChunks: 10, tailBytes: 5, tailChunks: 10 });
    live.push('stdout', '€€€€'); // 3 bytes each: one fits the head; the last is kept whole
    live.end();
    expect(chunks[0]).toEqual(['stdout', '€']);
    expect(chunks[1][1]).toMatch(/\n€$/);
    expect(chunks[1][1]).not.toContain('\uFFFD');
  });

  it('passes nothing on after end (a tool abandoned after its abort)', () => {
    const { chunks, live } = collect();
    live.end();
    live.push('stdout', 'late');
    expect(chunks).toEqual([]);
  });
});

describe('ToolRunner bounds every call’s live output', () => {
  let ws: TempWorkspace;
  let runner: ToolRunner;

  beforeAll(async () => {
    ws = await makeWorkspace();
    const withTools = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(testConfig(ws.root, { toolTimeoutMs: 60_000 })), ToolsModule],
    }).compile();
    await withTools.init();
    runner = withTools.get(ToolRunner);
  });
  afterAll(() => ws.cleanup());

  function flooding(chunks: number, size: number): Tool {
    return {
      name: 'flood',
      description: 'Streams a lot',
      kind: 'read',
      parameters: { type: 'object' },
      async execute(_args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
        const piece = 'p'.repeat(size - 5);
        for (let i = 0; i < chunks; i++)
          ctx.emitOutput(i % 2 ? 'stderr' : 'stdout', `${String(i).padStart(5, '0')}${piece}`);
        return { content: 'done' };
      },
    };
  }

  it('streams 80 MB of output as at most the head and the tail, the last chunk ending with the last output', async () => {
    const out: Chunk[] = [];
    const result = await runner.run(
      flooding(20_000, 4096),
      {},
      {
        runId: 'r',
        sessionId: 's',
        toolCallId: 'c',
        emitOutput: (stream, chunk) => out.push([stream, chunk]),
      },
    );
    expect(result).toEqual({ content: 'done' });
    const bytes = out.reduce((sum, [, c]) => sum + Buffer.byteLength(c), 0);
    expect(bytes).toBeLessThanOrEqual(LIVE_HEAD_BYTES + LIVE_TAIL_BYTES + 200);
    expect(out.length).toBeLessThanOrEqual(LIVE_HEAD_CHUNKS + LIVE_TAIL_CHUNKS);
    expect(out.some(([, c]) => /live output cut: \d+ bytes dropped/.test(c))).toBe(true);
    expect(out.at(-1)![1].startsWith('19999')).toBe(true);
  });
});
