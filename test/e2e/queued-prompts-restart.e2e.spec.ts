import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';
import { FakeUpstream, text } from '../support/fake-upstream';
import { connect, createTestDatabase } from '../support/database';
import { spawnServer, type ServerProcess } from '../support/server-process';
import { eventKinds, openStream } from '../support/sse-client';

/** A queued prompt survives the death of the only process (`node dist/main.js`, SIGKILL) and a restart. */
describe('a queued prompt across a restart (e2e)', () => {
  let upstream: FakeUpstream;
  let env: Record<string, string>;
  let db: Client;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    const databaseUrl = await createTestDatabase();
    db = await connect(databaseUrl);
    env = {
      DATABASE_URL: databaseUrl,
      OPENAI_BASE_URL: upstream.baseUrl,
      WORKSPACE_ROOT: join(mkdtempSync(join(tmpdir(), 'loopwright-queued-')), 'workspace'),
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

  it('a prompt queued through one replica runs on the one that ends the active run, streamed by the first', async () => {
    const slow = text(Array.from({ length: 60 }, (_, i) => `w${i}`).join(' '), { delayMs: 20 });
    upstream.enqueue(slow, text('Queued answer.'));
    const a = await spawnServer(env);
    const b = await spawnServer(env);
    servers.push(a, b);
    const active = await openStream(`${a.url}/v1/chat`, { body: { prompt: 'Talk.', tools: [] } });
    await active.until('text');
    const sessionId = active.headers.get('x-session-id')!;
    const queued = await openStream(`${b.url}/v1/sessions/${sessionId}/messages`, {
      body: { content: 'Then this.', onActive: 'enqueue' },
    });
    const log = await queued.rest(30_000);
    expect(eventKinds(log)).toEqual(['queued', 'run_started', 'text', 'step_finished', 'done']);
    expect(log.at(-1)!.data).toMatchObject({ status: 'completed' });
    expect((await active.rest()).at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    expect(upstream.requests.at(-1)!.body.messages.at(-1)).toEqual({ role: 'user', content: 'Then this.' });
  });

  it('kill -9 while a prompt waits: after the restart the active run is taken over, then the queued one runs, its stream going on from queued', async () => {
    const slow = text(Array.from({ length: 300 }, (_, i) => `w${i}`).join(' '), { delayMs: 20 });
    upstream.enqueue(slow, text('The end.'), text('Second answer.'));
    const first = await spawnServer(env);
    servers.push(first);
    const active = await openStream(`${first.url}/v1/chat`, { body: { prompt: 'Talk.', tools: [] } });
    await active.until('text');
    const sessionId = active.headers.get('x-session-id')!;
    const queued = await openStream(`${first.url}/v1/sessions/${sessionId}/messages`, {
      body: { content: 'Second.', onActive: 'enqueue' },
    });
    const runId = queued.headers.get('x-run-id')!;
    const seen = [(await queued.next())!];
    expect(seen[0]).toMatchObject({ id: 1, event: 'queued', data: { position: 1 } });

    await first.kill('SIGKILL');
    const second = await spawnServer(env);
    servers.push(second);
    const rest = await (
      await openStream(`${second.url}/v1/runs/${runId}/events`, { headers: { 'Last-Event-ID': '1' } })
    ).rest(30_000);
    const log = [...seen, ...rest];
    expect(eventKinds(log)).toEqual(['queued', 'run_started', 'text', 'step_finished', 'done']);
    expect(log.map((e) => e.id)).toEqual([1, 2, 3, 4, 5]);
    expect(log.at(-1)!.data).toMatchObject({ status: 'completed' });

    // It ran after the active run had ended there: the model saw that run's whole answer first.
    const asked = upstream.requests.at(-1)!.body.messages.slice(1);
    expect(asked.at(-1)).toEqual({ role: 'user', content: 'Second.' });
    expect(asked.at(-2)).toEqual({ role: 'assistant', content: 'The end.' });
    const statuses = await db.query(`SELECT status FROM runs WHERE session_id = $1 ORDER BY created_at`, [
      sessionId,
    ]);
    expect(statuses.rows.map((r: { status: string }) => r.status)).toEqual(['completed', 'completed']);
  });
});
