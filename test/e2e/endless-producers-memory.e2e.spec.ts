import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { oneEvent } from '../support/agent-scripts';
import { connect, createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { spawnServer, type ServerProcess } from '../support/server-process';
import { api, openStream, type StreamEvent } from '../support/sse-client';
import {
  LIVE_HEAD_BYTES,
  LIVE_HEAD_CHUNKS,
  LIVE_TAIL_BYTES,
  LIVE_TAIL_CHUNKS,
} from '../../src/tools/live-output';
import { MCP_MAX_LIST_PAGES } from '../../src/mcp/mcp-connection';

/**
 * Every producer that can stream without end, against the production server (`node dist/main.js`)
 * in its own process: a command printing hundreds of megabytes, an MCP tool flooding progress, an
 * MCP server whose tool list never ends, one that says "list changed" thousands of times a second.
 * Each is checked by what it leaves: rows in run_events and the server's resident memory, sampled
 * while it runs (never by time).
 */

const MiB = 1024 * 1024;
/**
 * What the server may grow by during one flood: the garbage of parsing and piping hundreds of
 * megabytes, before the collector catches up, stays well under it. The unbounded code grew by about
 * 400 MiB (300 MB of command output), 600 MiB (160 MB of progress), 775 MiB in 5 s (endless list)
 * and hundreds more (list_changed).
 */
const RSS_GROWTH_LIMIT = 256 * MiB;
/**
 * The servers' heap is capped so that the unbounded code, which grows until it is killed, fails
 * the test without taking the machine's memory with it.
 */
const HEAP_CAP = { NODE_OPTIONS: '--max-old-space-size=1024' };
/** The most a call's live output can be stored as: the head, the tail, and the note of what was dropped. */
const MAX_OUTPUT_ROWS = LIVE_HEAD_CHUNKS + LIVE_TAIL_CHUNKS;
const MAX_OUTPUT_BYTES = LIVE_HEAD_BYTES + LIVE_TAIL_BYTES + 200;

/** How many list_changed notices the flood test lets through (2,000 a second). */
const FLOODED = 30_000;

const TEST_SERVER = resolve(__dirname, '../support/mcp-test-server.mjs');
const onLinux = process.platform === 'linux';
if (!onLinux) console.warn('endless-producers-memory: skipped, reading RSS needs /proc (Linux)');

/** Resident memory of a process, in bytes, from /proc (Linux); Infinity once it is gone (killed for its memory). */
function rssOf(pid: number): number {
  if (!existsSync(`/proc/${pid}/status`)) return Infinity;
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return kb ? Number(kb[1]) * 1024 : Infinity;
}

/** Samples the server's RSS while `work` runs; returns its result and the most the RSS grew by. */
async function sampled<T>(pid: number, work: () => Promise<T>): Promise<{ value: T; growth: number }> {
  const before = rssOf(pid);
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 100);
  try {
    const value = await work();
    peak = Math.max(peak, rssOf(pid));
    return { value, growth: peak - before };
  } finally {
    clearInterval(timer);
  }
}

const lines = (file: string): string[] =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];

/** The tool_call_output rows stored for a run: how many, and their chunks' bytes. */
async function storedOutput(databaseUrl: string, runId: string): Promise<{ rows: number; bytes: number }> {
  const db = await connect(databaseUrl);
  try {
    const { rows } = await db.query<{ rows: string; bytes: string | null }>(
      `SELECT count(*) AS rows, sum(octet_length(payload::json->>'chunk')) AS bytes
         FROM run_events WHERE run_id = $1 AND type = 'tool_call_output'`,
      [runId],
    );
    return { rows: Number(rows[0].rows), bytes: Number(rows[0].bytes ?? 0) };
  } finally {
    await db.end();
  }
}

(onLinux ? describe : describe.skip)(
  'producers that stream without end, against the production server (e2e)',
  () => {
    describe('a tool call’s live output', () => {
      let upstream: FakeUpstream;
      let server: ServerProcess;
      let databaseUrl: string;

      beforeAll(async () => {
        const dir = mkdtempSync(join(tmpdir(), 'loopwright-floods-'));
        upstream = await FakeUpstream.start();
        databaseUrl = await createTestDatabase();
        writeFileSync(
          join(dir, 'mcp.json'),
          JSON.stringify({ mcpServers: { noisy: { command: process.execPath, args: [TEST_SERVER] } } }),
        );
        server = await spawnServer({
          DATABASE_URL: databaseUrl,
          OPENAI_BASE_URL: upstream.baseUrl,
          WORKSPACE_ROOT: mkdtempSync(join(tmpdir(), 'loopwright-floods-ws-')),
          ENABLE_RUN_COMMAND: 'true',
          TOOL_POLICY: 'run_command=allow,noisy__*=allow',
          MCP_CONFIG: join(dir, 'mcp.json'),
          ...HEAP_CAP,
        });
        await eventually(async () => {
          const servers = (await api(server.url, 'GET', '/v1/mcp/servers')).body as { status: string }[];
          return servers[0]?.status === 'connected';
        }, 20_000);
        // Warm up: the first run loads what every run needs (code paths, pools, caches).
        upstream.enqueue(
          toolCalls([{ id: 'warm', name: 'run_command', arguments: { command: 'echo warm' } }]),
        );
        upstream.enqueue(text('warm'));
        await chat('warm up');
      });
      afterAll(async () => {
        await server?.kill('SIGKILL');
        await upstream?.close();
      });

      async function chat(prompt: string): Promise<StreamEvent[]> {
        const stream = await openStream(`${server.url}/v1/chat`, { body: { prompt } });
        expect(stream.status).toBe(200);
        return stream.rest(180_000);
      }

      it('stores and streams a command printing 300 MB as its head and tail only, memory flat', async () => {
        const command = 'yes "a line of output that goes on and on" | head -c 300000000; echo THE-END';
        upstream.enqueue(
          toolCalls([{ id: 'yes', name: 'run_command', arguments: { command, timeout_ms: 170_000 } }]),
          text('It printed a lot.'),
        );
        const { value: events, growth } = await sampled(server.pid, () => chat('print a lot'));
        console.info(`endless-producers-memory: 300 MB command, RSS +${Math.round(growth / MiB)} MiB`);

        const result = oneEvent(events, 'tool_call_result', 'yes').data;
        expect(result).toMatchObject({ isError: false });
        expect(result.content).toContain('exit code 0');
        const outputs = events.filter((e) => e.event === 'tool_call_output');
        expect(outputs.length).toBeLessThanOrEqual(MAX_OUTPUT_ROWS);
        const last = outputs.map((e) => e.data.chunk as string).join('');
        expect(last).toMatch(/live output cut: \d+ bytes dropped/);
        expect(last.endsWith('THE-END\n')).toBe(true);

        const stored = await storedOutput(databaseUrl, events[0].data.runId as string);
        expect(stored.rows).toBe(outputs.length);
        expect(stored.bytes).toBeLessThanOrEqual(MAX_OUTPUT_BYTES);
        expect(growth).toBeLessThan(RSS_GROWTH_LIMIT);
      }, 180_000);

      it('stores and streams an MCP tool’s 40,000 progress notices of 4 KB as a bounded head and tail, memory flat', async () => {
        upstream.enqueue(
          toolCalls([
            { id: 'flood', name: 'noisy__flood_progress', arguments: { count: 40_000, size: 4096 } },
          ]),
          text('It was noisy.'),
        );
        const { value: events, growth } = await sampled(server.pid, () => chat('make noise'));
        console.info(`endless-producers-memory: MCP progress flood, RSS +${Math.round(growth / MiB)} MiB`);

        expect(oneEvent(events, 'tool_call_result', 'flood').data).toMatchObject({
          isError: false,
          content: 'sent 40000 notices',
        });
        const outputs = events.filter((e) => e.event === 'tool_call_output');
        expect(outputs.length).toBeLessThanOrEqual(MAX_OUTPUT_ROWS);
        expect(outputs.at(-1)!.data.chunk).toMatch(/^notice 399\d\d /); // the end (the SDK may hand the last few over after the result)
        expect(outputs.some((e) => /live output cut: \d+ bytes dropped/.test(e.data.chunk as string))).toBe(
          true,
        );

        const stored = await storedOutput(databaseUrl, events[0].data.runId as string);
        expect(stored.rows).toBe(outputs.length);
        expect(stored.bytes).toBeLessThanOrEqual(MAX_OUTPUT_BYTES);
        expect(growth).toBeLessThan(RSS_GROWTH_LIMIT);
      }, 180_000);
    });

    describe('MCP servers whose lists never settle', () => {
      let upstream: FakeUpstream;
      let server: ServerProcess;
      let dir: string;
      let startedAt: number;

      beforeAll(async () => {
        dir = mkdtempSync(join(tmpdir(), 'loopwright-list-floods-'));
        upstream = await FakeUpstream.start();
        const node = process.execPath;
        writeFileSync(
          join(dir, 'mcp.json'),
          JSON.stringify({
            mcpServers: {
              endless: {
                command: node,
                args: [TEST_SERVER],
                env: { FLOOD: 'cursor', START_FILE: join(dir, 'endless-start.txt') },
              },
              chatty: {
                command: node,
                args: [TEST_SERVER],
                env: {
                  FLOOD: 'list_changed',
                  FLOOD_RATE: '2000',
                  FILLER_TOOLS: '100',
                  LIST_FILE: join(dir, 'chatty-list.txt'),
                  NOTICE_FILE: join(dir, 'chatty-notices.txt'),
                },
              },
            },
          }),
        );
        server = await spawnServer({
          DATABASE_URL: await createTestDatabase(),
          OPENAI_BASE_URL: upstream.baseUrl,
          WORKSPACE_ROOT: mkdtempSync(join(tmpdir(), 'loopwright-list-floods-ws-')),
          TOOL_POLICY: 'chatty__*=allow',
          MCP_CONFIG: join(dir, 'mcp.json'),
          ...HEAP_CAP,
        });
        startedAt = rssOf(server.pid);
      });
      afterAll(async () => {
        await server?.kill('SIGKILL');
        await upstream?.close();
      });

      const status = async (name: string) =>
        ((await api(server.url, 'GET', '/v1/mcp/servers')).body as Record<string, unknown>[]).find(
          (s) => s.name === name,
        )!;

      it('fails a server whose tool list never ends, naming the cap, and retries it with backoff, memory flat', async () => {
        const { growth } = await sampled(server.pid, async () => {
          await eventually(async () => (await status('endless')).status === 'failed', 30_000);
          // A second attempt (the backoff's first retry) meets the same cap.
          await eventually(() => lines(join(dir, 'endless-start.txt')).length >= 2, 30_000);
          await eventually(async () => (await status('endless')).status === 'failed', 30_000);
        });
        console.info(`endless-producers-memory: endless tool list, RSS +${Math.round(growth / MiB)} MiB`);
        expect(await status('endless')).toMatchObject({
          status: 'failed',
          error: expect.stringContaining(`${MCP_MAX_LIST_PAGES} pages`),
          tools: [],
        });
        expect(rssOf(server.pid) - startedAt).toBeLessThan(RSS_GROWTH_LIMIT);
      });

      it('coalesces a flood of list_changed notices: the server stays connected and usable, memory flat', async () => {
        await eventually(async () => (await status('chatty')).status === 'connected', 20_000);
        const listFile = join(dir, 'chatty-list.txt');
        const noticeFile = join(dir, 'chatty-notices.txt');
        // The server rewrites the count as it goes: a read that lands mid-rewrite sees nothing, so the
        // highest count read so far is the count (it only grows).
        let highest = 0;
        const noticesSent = () => {
          const read = existsSync(noticeFile) ? Number(readFileSync(noticeFile, 'utf8') || 0) : 0;
          highest = Math.max(highest, read);
          return highest;
        };
        const { growth } = await sampled(server.pid, async () => {
          // Another FLOODED notices (by what the server says it sent, not by time), the service answering throughout.
          const target = noticesSent() + FLOODED;
          // A server growing past the limit has failed already: stop there rather than wait for its end.
          while (noticesSent() < target && rssOf(server.pid) - startedAt < RSS_GROWTH_LIMIT) {
            expect((await fetch(`${server.url}/health/live`)).status).toBe(200);
            await new Promise((r) => setTimeout(r, 500));
          }
        });
        console.info(
          `endless-producers-memory: list_changed flood, ${noticesSent()} notices, ${lines(listFile).length} lists, RSS +${Math.round(growth / MiB)} MiB`,
        );
        // Coalesced: far fewer refreshes than notices (one in flight, one pending).
        expect(lines(listFile).length).toBeLessThan(noticesSent() / 4);
        expect(growth).toBeLessThan(RSS_GROWTH_LIMIT);
        expect(rssOf(server.pid) - startedAt).toBeLessThan(RSS_GROWTH_LIMIT);
        expect(await status('chatty')).toMatchObject({ status: 'connected' });
        upstream.enqueue(
          toolCalls([{ id: 'note', name: 'chatty__read_note', arguments: { title: 'flood' } }]),
          text('Read.'),
        );
        const stream = await openStream(`${server.url}/v1/chat`, { body: { prompt: 'read a note' } });
        const events = await stream.rest(60_000);
        expect(oneEvent(events, 'tool_call_result', 'note').data).toMatchObject({
          isError: false,
          content: 'Note "flood": buy milk',
        });
      }, 180_000);
    });
  },
);
