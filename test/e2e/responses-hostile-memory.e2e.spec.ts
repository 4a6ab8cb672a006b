import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../support/database';
import { FakeResponses, responsesText } from '../support/fake-responses';
import { spawnServer, type ServerProcess } from '../support/server-process';
import { openStream, type StreamEvent } from '../support/sse-client';

/** Resident memory of a process, in bytes, from /proc (Linux). */
function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!kb) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb[1]) * 1024;
}

const MiB = 1024 * 1024;
/** What the server may grow by over both hostile runs: far less than reading them whole takes. */
const RSS_GROWTH_LIMIT = 192 * MiB;

const onLinux = process.platform === 'linux';
if (!onLinux) console.warn('responses-hostile-memory: skipped, reading RSS needs /proc (Linux)');

/**
 * The production build (`node dist/main.js`) on `openai-responses/…` against a Responses API that
 * streams hostile bodies: one SSE line of 96 MiB without a line break, then six reasoning items of
 * 8 MiB `encrypted_content` each. Both are refused at their bounds (the line at SSE_EVENT_MAX_CHARS,
 * the items at STREAM_LIMITS.providerDataMaxChars), the server's resident memory stays bounded, and the next
 * request carries none of what was refused.
 */
(onLinux ? describe : describe.skip)('a hostile Responses API against the production server (e2e)', () => {
  let upstream: FakeResponses;
  let server: ServerProcess;

  beforeAll(async () => {
    upstream = await FakeResponses.start();
    const workspace = mkdtempSync(join(tmpdir(), 'loopwright-responses-hostile-'));
    writeFileSync(join(workspace, 'README.md'), '# Demo\n');
    server = await spawnServer({
      DATABASE_URL: await createTestDatabase(),
      OPENAI_BASE_URL: upstream.baseUrl,
      LLM_MODEL: 'openai-responses/gpt-5-mini',
      LLM_MAX_RETRIES: '0',
      WORKSPACE_ROOT: workspace,
    });
  });
  afterAll(async () => {
    await server?.kill('SIGKILL');
    await upstream?.close();
  });

  async function chat(body: Record<string, unknown>): Promise<StreamEvent[]> {
    const stream = await openStream(`${server.url}/v1/chat`, { body });
    expect(stream.status).toBe(200);
    return stream.rest(120_000);
  }

  it('refuses a 96 MiB line and 48 MiB of reasoning items with bounded RSS; the next request is small', async () => {
    // Warm up: the first run loads what every run needs (code paths, pools, caches).
    upstream.enqueue(responsesText('warm', 'Warm up.'));
    const warm = await chat({ prompt: 'warm up' });
    expect(warm.at(-1)!.data.status).toBe('completed');
    const sessionId = warm.at(-1)!.data.sessionId as string;
    const before = rssOf(server.pid);

    upstream.enqueue({ kind: 'long-line', chars: 96 * MiB });
    const line = await chat({ prompt: 'line', sessionId });
    expect(line.find((e) => e.event === 'error')?.data).toMatchObject({ code: 'UPSTREAM_MALFORMED' });

    upstream.enqueue(
      {
        kind: 'answer',
        reasoning: 'Look first.',
        reasoningItems: 6,
        encryptedChars: 8 * MiB,
        calls: [{ name: 'read_file', arguments: { path: 'README.md' } }],
      },
      responsesText('unused'),
    );
    const items = await chat({ prompt: 'items', sessionId });
    expect(items.filter((e) => e.event === 'step_finished').map((e) => e.data.finishReason)).toEqual([
      'length',
    ]);
    expect(items.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });

    upstream.enqueue(responsesText('Small.'));
    const next = await chat({ prompt: 'next', sessionId });
    expect(next.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });

    const after = rssOf(server.pid);
    console.info(
      `responses-hostile-memory: RSS ${Math.round(before / MiB)} MiB → ${Math.round(after / MiB)} MiB`,
    );
    expect(after - before).toBeLessThan(RSS_GROWTH_LIMIT);
    const last = upstream.requests.at(-1)!;
    expect(last.body.input.filter((item) => item.type === 'reasoning')).toHaveLength(1);
    expect(JSON.stringify(last.body).length).toBeLessThan(64 * 1024);
    expect(upstream.refusals).toEqual([]);
  }, 180_000);
});
