import type { Client } from 'pg';
import { FakeUpstream, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { connect, createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { api, openStream } from '../support/sse-client';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * Two replicas on one database, both woken by every event and both polling: each event is claimed
 * by one of them, once — no delivery is attempted twice when its first attempt succeeds.
 */
describe('webhook claims across replicas (e2e)', () => {
  let upstream: FakeUpstream;
  let receiver: WebhookReceiver;
  let apps: TestApp[];
  let db: Client;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    receiver = await WebhookReceiver.start();
    const databaseUrl = await createTestDatabase();
    const env = { OPENAI_BASE_URL: upstream.baseUrl, WEBHOOK_ALLOW_PRIVATE: 'true' };
    apps = [await startApp(env, databaseUrl), await startApp(env, databaseUrl)];
    db = await connect(databaseUrl);
  });
  afterAll(async () => {
    await db.end();
    await Promise.all(apps.map((a) => a.close()));
    await receiver.close();
    await upstream.close();
  });

  it('each event is attempted once, by one replica, when its receiver answers 2xx', async () => {
    const created = await api(apps[0].url, 'POST', '/v1/webhooks', { url: receiver.url, events: ['*'] });
    expect(created.status).toBe(201);
    const runs = 12;
    for (let i = 0; i < runs; i++) upstream.enqueue(text(`Answer ${i}.`));
    await Promise.all(
      Array.from({ length: runs }, async (_, i) => {
        const app = apps[i % 2];
        await (await openStream(`${app.url}/v1/chat`, { body: { prompt: `Q${i}`, tools: [] } })).rest();
      }),
    );
    // A delivered event's row is deleted with its attempt's record: the attempts tell what happened.
    await eventually(async () => {
      const owed = await db.query(`SELECT 1 FROM webhook_deliveries`);
      return owed.rowCount === 0;
    }, 30_000);
    const rows = (await db.query(`SELECT delivery_id AS id, attempt, status FROM webhook_attempts`)).rows;
    expect(rows).toHaveLength(runs);
    expect(new Set(rows.map((r) => r.id)).size).toBe(runs);
    expect(rows.map((r) => [r.attempt, r.status])).toEqual(Array(runs).fill([1, 200]));
    expect(new Set(receiver.received.map((r) => r.id))).toEqual(new Set(rows.map((r) => r.id)));
    expect(receiver.received).toHaveLength(runs);
  });
});
