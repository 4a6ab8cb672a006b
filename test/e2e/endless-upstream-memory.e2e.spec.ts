import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../support/database';
import { endless, FakeUpstream, text } from '../support/fake-upstream';
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
/** What the server may grow by over the endless runs below: far less than their unbounded streams would take. */
const RSS_GROWTH_LIMIT = 192 * MiB;

const onLinux = process.platform === 'linux';
if (!onLinux) console.warn('endless-upstream-memory: skipped, reading RSS needs /proc (Linux)');

/**
 * The production build (`node dist/main.js`) against an upstream that streams text forever: with the
 * default ANSWER_MAX_BYTES each model call is cut at 1 MiB, the run completes, and the server's
 * resident memory stays bounded.
 */
(onLinux ? describe : describe.skip)('an endless upstream against the production server (e2e)', () => {
  let upstream: FakeUpstream;
  let server: ServerProcess;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    server = await spawnServer({
      DATABASE_URL: await createTestDatabase(),
      OPENAI_BASE_URL: upstream.baseUrl,
      WORKSPACE_ROOT: mkdtempSync(join(tmpdir(), 'loopwright-endless-')),
    });
  });
  afterAll(async () => {
    await server?.kill('SIGKILL');
    await upstream?.close();
  });

  async function chat(prompt: string): Promise<StreamEvent[]> {
    const stream = await openStream(`${server.url}/v1/chat`, { body: { prompt } });
    expect(stream.status).toBe(200);
    return stream.rest(60_000);
  }

  it('cuts every endless answer at 1 MiB, completes the runs, and keeps RSS bounded', async () => {
    // Warm up: the first run loads what every run needs (code paths, pools, caches).
    upstream.enqueue(text('warm'));
    expect((await chat('warm up')).at(-1)!.data.status).toBe('completed');
    const before = rssOf(server.pid);

    const piece = 'endless text '.repeat(8);
    for (let i = 0; i < 3; i++) {
      upstream.enqueue(endless(piece));
      const events = await chat(`run ${i}`);
      const streamed = events
        .filter((e) => e.event === 'text')
        .map((e) => e.data.delta as string)
        .join('');
      expect(Buffer.byteLength(streamed)).toBe(1_048_576);
      expect(events.filter((e) => e.event === 'step_finished').map((e) => e.data.finishReason)).toEqual([
        'length',
      ]);
      expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    }
    await upstream.waitForAborted(3);

    const after = rssOf(server.pid);
    console.info(
      `endless-upstream-memory: RSS ${Math.round(before / MiB)} MiB → ${Math.round(after / MiB)} MiB`,
    );
    expect(after - before).toBeLessThan(RSS_GROWTH_LIMIT);
    expect((await fetch(`${server.url}/health/live`)).status).toBe(200);
  });
});
