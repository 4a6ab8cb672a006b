import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Client } from 'pg';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { connect, createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { spawnServer, type ServerProcess } from '../support/server-process';
import { answerOf, api, openStream, type OpenStream, type StreamEvent } from '../support/sse-client';

const TEST_SERVER = resolve(__dirname, '../support/mcp-test-server.mjs');
const TERMINAL = new Set(['done', 'error']);

/** An answer long enough, streamed slowly enough, for a kill to land in its middle. */
const slowAnswer = (words = 300) =>
  text(Array.from({ length: words }, (_, i) => `w${i}`).join(' '), { delayMs: 20 });

/** Reads until `count` text events arrived: the kill then lands mid-answer. */
async function readText(stream: OpenStream, count = 2): Promise<StreamEvent[]> {
  const seen: StreamEvent[] = [];
  while (seen.filter((e) => e.event === 'text').length < count) {
    const more = await stream.until('text');
    if (more.length === 0) throw new Error('the stream ended before the answer did');
    seen.push(...more);
  }
  return seen;
}

/**
 * Real server processes (`node dist/main.js`) on one PostgreSQL, killed for real (SIGKILL, SIGTERM)
 * while their runs stream: the runs are taken over and go on ("Runs outlive their process").
 */
describe('runs that outlive their process (e2e)', () => {
  // Each test starts two or three server processes one after another and waits out leases: on a
  // loaded 2-core machine that alone can take most of jest's default 30 s.
  jest.setTimeout(90_000);
  let upstream: FakeUpstream;
  let env: Record<string, string>;
  let dir: string;
  let db: Client;
  const servers: ServerProcess[] = [];

  const start = async (extra: Record<string, string> = {}) => {
    const server = await spawnServer({ ...env, ...extra });
    servers.push(server);
    return server;
  };
  /** The run's whole log, read from `server` once the run has ended. */
  const replay = async (server: ServerProcess, runId: string) =>
    (await openStream(`${server.url}/v1/runs/${runId}/events`)).rest(30_000);
  const messagesOf = async (runId: string) =>
    (
      await db.query(
        `SELECT role, content, tool_calls AS "toolCalls", tool_call_id AS "toolCallId"
           FROM messages WHERE run_id = $1 ORDER BY seq`,
        [runId],
      )
    ).rows as { role: string; content: string | null; toolCalls: unknown; toolCallId: string | null }[];
  /** Every event once, numbered 1, 2, 3 … with exactly one terminal event, the last. */
  const expectWellFormed = (log: StreamEvent[]) => {
    expect(log.map((e) => e.id)).toEqual(log.map((_, i) => i + 1));
    expect(log.filter((e) => TERMINAL.has(e.event)).map((e) => e.id)).toEqual([log.length]);
  };

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    dir = mkdtempSync(join(tmpdir(), 'loopwright-takeover-'));
    const databaseUrl = await createTestDatabase();
    db = await connect(databaseUrl);
    env = {
      DATABASE_URL: databaseUrl,
      OPENAI_BASE_URL: upstream.baseUrl,
      WORKSPACE_ROOT: join(dir, 'workspace'),
      RUN_LEASE_MS: '1000',
    };
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.kill('SIGKILL')));
    upstream.reset();
  });
  afterAll(async () => {
    await db.end();
    await upstream.close();
  });

  it('kill -9 mid-answer: a replica takes the run over, the client reads on there from Last-Event-ID, and the model goes on from the text it was shown', async () => {
    const a = await start();
    const b = await start();
    upstream.enqueue(slowAnswer(), text('And that is the end.'));
    const stream = await openStream(`${a.url}/v1/chat`, { body: { prompt: 'Talk.', tools: [] } });
    const seen = await readText(stream);
    const { runId } = seen[0].data;
    await a.kill('SIGKILL');
    seen.push(...(await stream.rest()));
    expect(seen.filter((e) => TERMINAL.has(e.event))).toEqual([]);

    const follower = await openStream(`${b.url}/v1/runs/${runId}/events`, {
      headers: { 'Last-Event-ID': String(seen.at(-1)!.id) },
    });
    const rest = await follower.rest(30_000);
    const log = [...seen, ...rest];
    expectWellFormed(log);
    expect(log).toEqual(await replay(b, runId));

    const cut = log.findIndex((e) => e.event === 'step_finished');
    expect(log[cut].data).toMatchObject({ iteration: 1, finishReason: 'interrupted' });
    expect(log[cut + 1].data).toMatchObject({ type: 'run_resumed', reason: 'process_lost', iteration: 2 });
    expect(log.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed', iterations: 2 });
    const interrupted = answerOf(log.slice(0, cut));
    expect(interrupted).toMatch(/^w0 w1/);
    expect(answerOf(log.slice(cut))).toBe('And that is the end.');

    // The model's next request: the conversation as stored, the interrupted text as the assistant's.
    expect(upstream.requests.at(-1)!.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'Talk.' },
      { role: 'assistant', content: interrupted },
    ]);
    expect((await messagesOf(runId)).map((m) => [m.role, m.content])).toEqual([
      ['user', 'Talk.'],
      ['assistant', interrupted],
      ['assistant', 'And that is the end.'],
    ]);
  });

  it('SIGTERM hands running runs over at once: a replica continues them long before their lease would expire; the process exits 0', async () => {
    // A lease of a minute: only the hand-over lets the replica continue within the test.
    const a = await start({ RUN_LEASE_MS: '60000', SHUTDOWN_GRACE_MS: '1000' });
    const b = await start({ RUN_LEASE_MS: '60000' });
    upstream.enqueue(slowAnswer(), text('Finished elsewhere.'));
    const stream = await openStream(`${a.url}/v1/chat`, { body: { prompt: 'Talk.', tools: [] } });
    const seen = await readText(stream);
    const { runId } = seen[0].data;
    const exited = a.kill('SIGTERM');
    seen.push(...(await stream.rest()));
    expect(seen.filter((e) => TERMINAL.has(e.event))).toEqual([]);
    expect(await exited).toBe(0);

    const rest = await (
      await openStream(`${b.url}/v1/runs/${runId}/events`, {
        headers: { 'Last-Event-ID': String(seen.at(-1)!.id) },
      })
    ).rest(30_000);
    const log = [...seen, ...rest];
    expectWellFormed(log);
    expect(log.find((e) => e.event === 'run_resumed')!.data).toMatchObject({ reason: 'shutdown' });
    expect(log.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
  });

  it('a lone server stopped with SIGTERM continues its runs when it starts again', async () => {
    const first = await start({ SHUTDOWN_GRACE_MS: '1000' });
    upstream.enqueue(slowAnswer(), slowAnswer());
    upstream.fallback = text('Continued after the restart.');
    const streams = await Promise.all(
      ['One.', 'Two.'].map((prompt) => openStream(`${first.url}/v1/chat`, { body: { prompt, tools: [] } })),
    );
    const runIds = await Promise.all(streams.map(async (s) => (await readText(s))[0].data.runId as string));
    expect(await first.kill('SIGTERM')).toBe(0);

    const second = await start();
    for (const runId of runIds) {
      await eventually(
        async () => (await api(second.url, 'GET', `/v1/runs/${runId}`)).body.status === 'completed',
        15_000,
      );
      const log = await replay(second, runId);
      expectWellFormed(log);
      expect(log.filter((e) => e.event === 'run_resumed').map((e) => e.data.reason)).toEqual(['shutdown']);
      expect(answerOf(log)).toMatch(/Continued after the restart\.$/);
    }
  });

  it('a run lost more often than RUN_MAX_RESUMES fails RUN_ABANDONED, stored and well-paired; up to then a restarted server continues it', async () => {
    const limits = { RUN_MAX_RESUMES: '1' };
    const first = await start(limits);
    upstream.enqueue(slowAnswer(), slowAnswer());
    const stream = await openStream(`${first.url}/v1/chat`, { body: { prompt: 'Crash me.', tools: [] } });
    const { runId } = (await readText(stream))[0].data;
    await first.kill('SIGKILL');

    // Restarted alone, the server takes the run over (the first loss is within the limit) …
    const second = await start(limits);
    const follower = await openStream(`${second.url}/v1/runs/${runId}/events`);
    await follower.until('run_resumed', 15_000);
    await readText(follower);
    await second.kill('SIGKILL');

    // … and the second loss is one too many.
    const third = await start(limits);
    await eventually(
      async () => (await api(third.url, 'GET', `/v1/runs/${runId}`)).body.status === 'failed',
      15_000,
    );
    const run = (await api(third.url, 'GET', `/v1/runs/${runId}`)).body;
    expect(run.error).toMatchObject({ code: 'RUN_ABANDONED', retryable: true });
    const log = await replay(third, runId);
    expectWellFormed(log);
    expect(log.filter((e) => e.event === 'run_resumed')).toHaveLength(1);
    expect(log.at(-1)!.data).toMatchObject({ type: 'error', code: 'RUN_ABANDONED' });
    const cut = log.findIndex((e) => e.event === 'run_resumed');
    expect((await messagesOf(runId)).map((m) => [m.role, m.content])).toEqual([
      ['user', 'Crash me.'],
      ['assistant', answerOf(log.slice(0, cut))],
      ['assistant', answerOf(log.slice(cut))],
    ]);
  });

  it('with replicas racing, each lost run is taken over exactly once and ends exactly once', async () => {
    const a = await start();
    const replicas = [await start(), await start()];
    upstream.enqueue(...Array.from({ length: 4 }, () => slowAnswer()));
    upstream.fallback = text('Taken over.');
    const streams = await Promise.all(
      [1, 2, 3, 4].map((n) => openStream(`${a.url}/v1/chat`, { body: { prompt: `Run ${n}.`, tools: [] } })),
    );
    const runIds = await Promise.all(
      streams.map(async (s) => (await readText(s, 1))[0].data.runId as string),
    );
    await a.kill('SIGKILL');

    for (const runId of runIds) {
      await eventually(
        async () => (await api(replicas[0].url, 'GET', `/v1/runs/${runId}`)).body.status === 'completed',
        15_000,
      );
      const log = await replay(replicas[1], runId);
      expectWellFormed(log);
      expect(log.filter((e) => e.event === 'run_resumed')).toHaveLength(1);
    }
    const rows = await db.query(`SELECT resumes FROM runs WHERE id = ANY($1)`, [runIds]);
    expect(rows.rows.map((r: { resumes: number }) => r.resumes)).toEqual([1, 1, 1, 1]);
  });

  it('kill -9 mid-tool: a write that was running gets INTERRUPTED and does not run again; a read runs again', async () => {
    const calls = join(dir, 'calls.txt');
    const mcpConfig = join(dir, 'mcp.json');
    writeFileSync(
      mcpConfig,
      JSON.stringify({
        mcpServers: { slow: { command: process.execPath, args: [TEST_SERVER], env: { CALLS_FILE: calls } } },
      }),
    );
    const withTools = { MCP_CONFIG: mcpConfig, TOOL_POLICY: 'slow__slow_write=allow' };
    const a = await start(withTools);
    const b = await start(withTools);
    const lines = () => (existsSync(calls) ? readFileSync(calls, 'utf8').split('\n').filter(Boolean) : []);
    const connected = async (s: ServerProcess) =>
      ((await api(s.url, 'GET', '/v1/mcp/servers')).body as { status: string }[])[0]?.status === 'connected';
    await eventually(async () => (await connected(a)) && (await connected(b)), 20_000);
    upstream.enqueue(
      toolCalls([
        { name: 'slow__slow_read', arguments: { ms: 4000 } },
        { name: 'slow__slow_write', arguments: { ms: 60000 } },
      ]),
      text('One of them may not have happened.'),
    );
    const stream = await openStream(`${a.url}/v1/chat`, { body: { prompt: 'Read, then write.' } });
    const seen = await stream.until('step_finished');
    const { runId } = seen[0].data;
    const [read, write] = seen.filter((e) => e.event === 'tool_call_start').map((e) => e.data.toolCallId);
    await eventually(() => lines().includes('write'));
    await a.kill('SIGKILL');

    await eventually(
      async () => (await api(b.url, 'GET', `/v1/runs/${runId}`)).body.status === 'completed',
      20_000,
    );
    const log = await replay(b, runId);
    expectWellFormed(log);
    const results = new Map(
      log.filter((e) => e.event === 'tool_call_result').map((e) => [e.data.toolCallId, e.data]),
    );
    expect(results.get(write)).toMatchObject({
      isError: true,
      errorCode: 'INTERRUPTED',
      content: 'the server stopped while this ran; whether it had an effect is unknown',
    });
    expect(results.get(read)).toMatchObject({ isError: false, content: 'read in 4000 ms' });
    // The read ran again on the replica; the write never again.
    expect(lines().sort()).toEqual(['read', 'read', 'write']);
    expect(log.find((e) => e.event === 'run_resumed')!.data).toMatchObject({ iteration: 2 });

    const next = upstream.requests.at(-1)!.body.messages;
    expect(next.slice(-3)).toEqual([
      expect.objectContaining({ role: 'assistant', tool_calls: expect.any(Array) }),
      { role: 'tool', tool_call_id: read, content: 'read in 4000 ms' },
      {
        role: 'tool',
        tool_call_id: write,
        content: 'the server stopped while this ran; whether it had an effect is unknown',
      },
    ]);
  });

  it('a cancel while the run has no live process ends it cancelled instead of taken over, keeping its text', async () => {
    const slowLease = { RUN_LEASE_MS: '3000' };
    const a = await start(slowLease);
    const b = await start(slowLease);
    upstream.enqueue(slowAnswer());
    const stream = await openStream(`${a.url}/v1/chat`, { body: { prompt: 'Talk.', tools: [] } });
    const seen = await readText(stream);
    const { runId } = seen[0].data;
    await a.kill('SIGKILL');
    expect((await api(b.url, 'POST', `/v1/runs/${runId}/cancel`)).status).toBe(202);

    await eventually(
      async () => (await api(b.url, 'GET', `/v1/runs/${runId}`)).body.status === 'cancelled',
      15_000,
    );
    const log = await replay(b, runId);
    expectWellFormed(log);
    expect(log.map((e) => e.event)).not.toContain('run_resumed');
    expect(log.at(-1)!.data).toMatchObject({ type: 'done', status: 'cancelled' });
    expect((await messagesOf(runId)).map((m) => [m.role, m.content])).toEqual([
      ['user', 'Talk.'],
      ['assistant', answerOf(log)],
    ]);
  });
});
