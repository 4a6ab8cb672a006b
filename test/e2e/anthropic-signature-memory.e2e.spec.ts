import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { anthropicSignatureFlood, anthropicText, FakeAnthropic } from '../support/fake-anthropic';
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
/** The flood: what a hostile upstream streamed as one thinking block's signature (RSS +424 MiB when read whole). */
const FLOOD = 96 * MiB;
/** What the server may grow by over the flooded run: far less than the flood itself. */
const RSS_GROWTH_LIMIT = 64 * MiB;

const onLinux = process.platform === 'linux';
if (!onLinux) console.warn('anthropic-signature-memory: skipped, reading RSS needs /proc (Linux)');

/**
 * The production build (`node dist/main.js`) on Anthropic with thinking on, against an upstream whose
 * thinking block's `signature_delta`s add up to 96 MiB: the call is cut at the bound on opaque state,
 * the run completes, resident memory stays bounded, and the next model call carries none of it.
 */
(onLinux ? describe : describe.skip)(
  'a thinking signature without end against the production server (e2e)',
  () => {
    let anthropic: FakeAnthropic;
    let server: ServerProcess;

    beforeAll(async () => {
      anthropic = await FakeAnthropic.start();
      server = await spawnServer({
        DATABASE_URL: await createTestDatabase(),
        OPENAI_BASE_URL: anthropic.baseUrl,
        ANTHROPIC_API_KEY: 'sk-ant-test',
        ANTHROPIC_BASE_URL: anthropic.baseUrl,
        LLM_MODEL: 'anthropic/claude-test',
        LLM_REASONING: 'high',
        LLM_MAX_RETRIES: '0',
        WORKSPACE_ROOT: mkdtempSync(join(tmpdir(), 'loopwright-signature-')),
      });
    });
    afterAll(async () => {
      await server?.kill('SIGKILL');
      await anthropic?.close();
    });

    async function send(path: string, body: Record<string, string>): Promise<StreamEvent[]> {
      const stream = await openStream(`${server.url}${path}`, { body });
      expect(stream.status).toBe(200);
      return stream.rest(60_000);
    }

    it('cuts the call at the bound, keeps RSS bounded, and sends none of the signature back', async () => {
      // Warm up: the first run loads what every run needs (code paths, pools, caches).
      anthropic.enqueue(anthropicText('warm', 'Warming up.'));
      expect((await send('/v1/chat', { prompt: 'warm up' })).at(-1)!.data.status).toBe('completed');
      const before = rssOf(server.pid);

      anthropic.enqueue(anthropicSignatureFlood(FLOOD, MiB, 'never read'));
      const events = await send('/v1/chat', { prompt: 'think hard' });
      expect(events.filter((e) => e.event === 'step_finished').map((e) => e.data.finishReason)).toEqual([
        'length',
      ]);
      expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
      await eventually(() => anthropic.closedEarly === 1);
      expect(anthropic.streamedBytes).toBeLessThan(FLOOD / 2);

      const after = rssOf(server.pid);
      console.info(
        `anthropic-signature-memory: RSS ${Math.round(before / MiB)} MiB → ${Math.round(after / MiB)} MiB`,
      );
      expect(after - before).toBeLessThan(RSS_GROWTH_LIMIT);

      // The next prompt of the same session: its model call carries no thinking of the cut one.
      const sessionId = events.find((e) => e.event === 'run_started')!.data.sessionId as string;
      anthropic.enqueue(anthropicText('ok'));
      const next = await send(`/v1/sessions/${sessionId}/messages`, { content: 'again' });
      expect(next.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
      expect(anthropic.refusals).toEqual([]);
      const body = anthropic.requests.at(-1)!.body;
      expect(JSON.stringify(body).length).toBeLessThan(64 * 1024);
      const blocks = body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
      expect(blocks.filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking')).toEqual([]);
    });
  },
);
