import { startApp, type TestApp } from '../support/app';
import { createTestDatabase } from '../support/database';
import { DatabaseOutage } from '../support/database-outage';
import { agentsFile } from '../support/delegation-scripts';
import { eventually } from '../support/eventually';
import { FakeUpstream, text } from '../support/fake-upstream';
import { api, openStream } from '../support/sse-client';
import { WebhookReceiver } from '../support/webhook-receiver';

const wait = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * A database that disappears under a started server: its periodic work (the run supervisor's
 * tasks, the webhook deliverer, the notification connection, the schedule ticker) backs off to a
 * try every few seconds instead of trying at its own period, and is back once the database is.
 * Counted as connection attempts through a proxy that closes each one while the database is down.
 */
describe('a server whose database disappears (e2e)', () => {
  let upstream: FakeUpstream;
  let receiver: WebhookReceiver;
  let outage: DatabaseOutage;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    receiver = await WebhookReceiver.start();
    outage = await DatabaseOutage.start(await createTestDatabase());
    app = await startApp(
      {
        OPENAI_BASE_URL: upstream.baseUrl,
        WEBHOOK_ALLOW_PRIVATE: 'true',
        // Agents configured: the delegation sweep runs too.
        AGENTS_CONFIG: agentsFile({ helper: { description: 'Helps.' } }),
      },
      outage.url,
    );
  });
  afterAll(async () => {
    outage?.up();
    await app?.close();
    await outage?.close();
    await receiver?.close();
    await upstream?.close();
  });

  it('tries the database a bounded number of times while it is gone, and works again once it is back', async () => {
    const hook = await api(app.url, 'POST', '/v1/webhooks', { url: receiver.url, events: ['run.completed'] });
    expect(hook.status).toBe(201);

    outage.down();
    // Every task has failed a few times by then and waits its longest (5 s) between tries.
    await wait(8_000);
    const before = outage.attempts;
    await wait(6_000);
    // At their own periods the tasks tried ~6 times a second (36 here); backed off, about 8.
    expect(outage.attempts - before).toBeLessThan(20);

    outage.up();
    await eventually(async () => (await api(app.url, 'GET', '/health/ready')).status === 200, 15_000);
    upstream.enqueue(text('Back.'));
    const events = await (
      await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Still there?' } })
    ).rest();
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    // The deliverer is back too: the run's event is delivered.
    const [delivered] = await receiver.nth(1, 15_000);
    expect(JSON.parse(delivered.body).data.runId).toBe(events[0].data.runId);
  }, 90_000);
});
