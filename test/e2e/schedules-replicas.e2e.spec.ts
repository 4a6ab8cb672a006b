import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';
import { FakeUpstream, text } from '../support/fake-upstream';
import { connect, createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { spawnServer, type ServerProcess } from '../support/server-process';
import { api } from '../support/sse-client';

const SCHEDULES = 6;

/**
 * Two replicas (`node dist/main.js` twice on one database) and `* * * * *` schedules: each due
 * time starts exactly one run. The due times are made to come now by moving next_run_at into the
 * past in the database (no clock in the server is faked): ten minutes missed start once each.
 */
describe('schedules on two replicas (e2e)', () => {
  let upstream: FakeUpstream;
  let db: Client;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    upstream.fallback = text('Done on schedule.');
    const databaseUrl = await createTestDatabase();
    db = await connect(databaseUrl);
    const env = {
      DATABASE_URL: databaseUrl,
      OPENAI_BASE_URL: upstream.baseUrl,
      WORKSPACE_ROOT: join(mkdtempSync(join(tmpdir(), 'loopwright-schedules-')), 'workspace'),
    };
    servers.push(await spawnServer(env), await spawnServer(env));
  });
  afterAll(async () => {
    await Promise.all(servers.splice(0).map((s) => s.kill('SIGKILL')));
    await db.end();
    await upstream.close();
  });

  it('every due time of every schedule is claimed once and starts one run; times missed start once', async () => {
    const [a, b] = servers;
    const ids: string[] = [];
    for (let i = 0; i < SCHEDULES; i++) {
      const created = await api(i % 2 ? b.url : a.url, 'POST', '/v1/schedules', {
        cron: '* * * * *',
        prompt: `Tick ${i}.`,
        tools: [],
      });
      expect(created.status).toBe(201);
      ids.push(created.body.id);
    }
    // Ten minutes of due times missed (as if no process had run), due for both replicas at once.
    await db.query(`UPDATE schedules SET next_run_at = date_trunc('minute', now()) - interval '10 minutes'`);

    await eventually(async () => {
      const { rows } = await db.query(
        `SELECT count(*)::int AS n FROM schedule_runs WHERE due_at < now() - interval '9 minutes' AND status = 'started'`,
      );
      return rows[0].n === SCHEDULES;
    }, 30_000);

    // No more due times from here (a real minute may have come meanwhile): those claimed settle.
    const next = await db.query(
      `SELECT count(*)::int AS n FROM schedules WHERE next_run_at > now() - interval '1 minute'`,
    );
    expect(next.rows[0].n).toBe(SCHEDULES);
    await db.query(`UPDATE schedules SET enabled = false`);
    await eventually(
      async () => (await db.query(`SELECT 1 FROM schedule_runs WHERE status = 'pending'`)).rows.length === 0,
      30_000,
    );

    // Each schedule: the missed ten minutes are one due time, and every due time one run; no run
    // started twice, none without its due time.
    const dueTimes = await db.query(
      `SELECT schedule_id AS "scheduleId", due_at AS "dueAt", run_id AS "runId", status FROM schedule_runs`,
    );
    for (const id of ids) {
      const mine = dueTimes.rows.filter((r: { scheduleId: string }) => r.scheduleId === id);
      const missed = mine.filter((r: { dueAt: Date }) => r.dueAt.getTime() < Date.now() - 9 * 60_000);
      expect(missed).toHaveLength(1);
      expect(new Set(mine.map((r: { dueAt: Date }) => r.dueAt.getTime())).size).toBe(mine.length);
    }
    const started = dueTimes.rows.filter((r: { status: string }) => r.status === 'started');
    const runs = await db.query(
      `SELECT r.id, m.content FROM runs r JOIN messages m ON m.run_id = r.id AND m.role = 'user'`,
    );
    expect(runs.rows.map((r: { id: string }) => r.id).sort()).toEqual(
      started.map((r: { runId: string }) => r.runId).sort(),
    );
    // One run per schedule's missed time: each prompt at least once, none more often than its due times.
    for (let i = 0; i < SCHEDULES; i++) {
      const sent = runs.rows.filter((r: { content: string }) => r.content === `Tick ${i}.`).length;
      const due = dueTimes.rows.filter((r: { scheduleId: string }) => r.scheduleId === ids[i]).length;
      expect(sent).toBeGreaterThanOrEqual(1);
      expect(sent).toBeLessThanOrEqual(due);
    }
  });
});
