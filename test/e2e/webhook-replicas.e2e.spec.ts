import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { FakeUpstream, text } from '../support/fake-upstream';
import { createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { spawnServer, type ServerProcess } from '../support/server-process';
import { api, openStream } from '../support/sse-client';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * Real server processes (`node dist/main.js`) on one PostgreSQL: an event owed by a process that is
 * killed (SIGKILL) in the middle of its attempt is delivered by the other, once the claim's lease
 * has run out, under the same webhook-id. The other starts once the first is dead: started
 * earlier, it could claim the event first, and which process a request came from is not seen.
 */
describe('webhook deliveries outlive their process (e2e)', () => {
  let upstream: FakeUpstream;
  let receiver: WebhookReceiver;
  let env: Record<string, string>;
  const servers: ServerProcess[] = [];

  const start = async () => {
    const server = await spawnServer(env);
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    receiver = await WebhookReceiver.start();
    env = {
      DATABASE_URL: await createTestDatabase(),
      OPENAI_BASE_URL: upstream.baseUrl,
      WORKSPACE_ROOT: join(mkdtempSync(join(tmpdir(), 'loopwright-webhooks-')), 'workspace'),
      WEBHOOK_ALLOW_PRIVATE: 'true',
      LOG_LEVEL: 'debug',
    };
  });
  afterAll(async () => {
    await Promise.all(servers.splice(0).map((s) => s.kill('SIGKILL')));
    await receiver.close();
    await upstream.close();
  });

  it('kill -9 while its attempt waits for the receiver: the other replica delivers the event, same id, signed', async () => {
    const a = await start();
    const created = await api(a.url, 'POST', '/v1/webhooks', {
      url: receiver.url,
      events: ['run.completed'],
    });
    expect(created.status).toBe(201);
    // A's attempt never gets an answer; the next one does.
    receiver.answer('hang', 200);
    upstream.enqueue(text('Hello.'));
    const events = await (await openStream(`${a.url}/v1/chat`, { body: { prompt: 'Hi', tools: [] } })).rest();
    const runId = events[0].data.runId as string;
    // Only A runs: the request under way is A's. It dies before its 10 s are up (nothing recorded).
    const [owed] = await receiver.nth(1);
    expect(await a.kill('SIGKILL')).toBeNull();

    const b = await start();
    const [, delivered] = await receiver.nth(2, 60_000);
    expect(delivered.id).toBe(owed.id);
    expect(delivered.body).toBe(owed.body);
    const event = new Webhook(created.body.secret).verify(delivered.body, delivered.headers) as any;
    expect(event).toMatchObject({ type: 'run.completed', data: { runId, status: 'completed' } });

    // B lists what it did: the second attempt (A's first died with it, unrecorded), answered 200.
    let listed: any[] = [];
    await eventually(async () => {
      listed = (await api(b.url, 'GET', `/v1/webhooks/${created.body.id}/deliveries`)).body.data;
      return listed.length > 0;
    });
    // The secret was shown once, in the creation's answer: never in either process's log.
    for (const server of [a, b])
      expect(server.output()).not.toContain(created.body.secret.slice('whsec_'.length));
    expect(listed).toEqual([
      {
        webhookId: created.body.id,
        type: 'run.completed',
        attempt: 2,
        status: 200,
        error: null,
        at: expect.any(String),
      },
    ]);
  }, 90_000);
});
