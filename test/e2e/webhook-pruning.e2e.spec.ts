import { randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { FakeUpstream, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { openCoreStore } from '../support/core-store';
import { connect, createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { api, openStream } from '../support/sse-client';
import { WebhookReceiver } from '../support/webhook-receiver';

/** The outbox does not grow forever: delivered events go at once, given-up ones and attempts after the retention. */
describe('webhook outbox pruning (e2e)', () => {
  let upstream: FakeUpstream;
  let ok: WebhookReceiver;
  let failing: WebhookReceiver;
  let app: TestApp;
  let db: Client;
  const stale = { webhookId: randomUUID(), givenUp: randomUUID(), recent: randomUUID() };

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    ok = await WebhookReceiver.start();
    failing = await WebhookReceiver.start();
    // Rows left by earlier processes, there before this server starts: a webhook with an event given
    // up 30 hours ago (past the 24-hour retention) and one given up an hour ago, each with its attempt.
    const databaseUrl = await createTestDatabase();
    const core = await openCoreStore(databaseUrl);
    await core.db.query(
      `INSERT INTO webhooks (id, owner, url, events, secret) VALUES ($1, 'default', 'http://127.0.0.1:9/', '{*}', 's')`,
      [stale.webhookId],
    );
    for (const [id, hoursAgo] of [
      [stale.givenUp, 30],
      [stale.recent, 1],
    ] as const) {
      await core.db.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, run_id, type, data, created_at, done_at)
         VALUES ($1, $2, gen_random_uuid(), 'run.completed', '{}', now() - $3 * interval '1 hour' - interval '24 hours',
                 now() - $3 * interval '1 hour')`,
        [id, stale.webhookId, hoursAgo],
      );
      await core.db.query(
        `INSERT INTO webhook_attempts (delivery_id, webhook_id, type, attempt, status, error, at)
         VALUES ($1, $2, 'run.completed', 30, NULL, 'ECONNREFUSED', now() - $3 * interval '1 hour')`,
        [id, stale.webhookId, hoursAgo],
      );
    }
    await core.close();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, WEBHOOK_ALLOW_PRIVATE: 'true' }, databaseUrl);
    db = await connect(databaseUrl);
  });
  afterAll(async () => {
    await db?.end();
    await app?.close();
    await ok?.close();
    await failing?.close();
    await upstream?.close();
  });

  const attemptsOf = async (webhookId: string) =>
    (await api(app.url, 'GET', `/v1/webhooks/${webhookId}/deliveries`)).body.data as {
      status: number | null;
    }[];

  it('deletes a delivered event at once and keeps one still owed; its attempts stay listed', async () => {
    const delivered = await api(app.url, 'POST', '/v1/webhooks', { url: ok.url, events: ['*'] });
    failing.answer(500, 500, 500, 500);
    const owed = await api(app.url, 'POST', '/v1/webhooks', { url: failing.url, events: ['*'] });
    upstream.enqueue(text('Done.'));
    const events = await (
      await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Hi', tools: [] } })
    ).rest();
    const runId = events[0].data.runId as string;

    await eventually(async () => (await attemptsOf(delivered.body.id)).length === 1);
    await eventually(async () => (await attemptsOf(owed.body.id)).length >= 1);
    expect((await attemptsOf(delivered.body.id)).map((a) => a.status)).toEqual([200]);
    expect((await attemptsOf(owed.body.id))[0].status).toBe(500);

    const rows = await db.query(`SELECT webhook_id, done_at FROM webhook_deliveries WHERE run_id = $1`, [
      runId,
    ]);
    expect(rows.rows).toEqual([{ webhook_id: owed.body.id, done_at: null }]);
  });

  it('deletes an event given up, and attempts, past WEBHOOK_RETENTION_HOURS; keeps those within it', async () => {
    const left = async (table: string, column: string) =>
      (
        await db.query(`SELECT ${column} AS id FROM ${table} WHERE webhook_id = $1`, [stale.webhookId])
      ).rows.map((r: { id: string }) => r.id);
    await eventually(async () => (await left('webhook_deliveries', 'id')).length < 2);
    await eventually(async () => (await left('webhook_attempts', 'delivery_id')).length < 2);
    expect(await left('webhook_deliveries', 'id')).toEqual([stale.recent]);
    expect(await left('webhook_attempts', 'delivery_id')).toEqual([stale.recent]);
  });
});
