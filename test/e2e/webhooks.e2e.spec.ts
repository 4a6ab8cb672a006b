import type { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { connect } from '../support/database';
import { eventually } from '../support/eventually';
import { api, openStream } from '../support/sse-client';
import { WebhookReceiver, type ReceivedWebhook } from '../support/webhook-receiver';

const KEYS = { alice: 'sk-alice', bob: 'sk-bob' } as const;
const auth = (secret: string) => ({ authorization: `Bearer ${secret}` });

/** What a receiver does with a request: verify it with the Standard Webhooks library, then parse it. */
const verified = (secret: string | Uint8Array, r: ReceivedWebhook) =>
  (typeof secret === 'string' ? new Webhook(secret) : new Webhook(secret, { format: 'raw' })).verify(
    r.body,
    r.headers,
  ) as { type: string; timestamp: string; data: Record<string, any> };

describe('webhooks (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  let db: Client;
  const receivers: WebhookReceiver[] = [];
  const receiver = async () => {
    const r = await WebhookReceiver.start();
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      API_KEYS: `alice:${KEYS.alice},bob:${KEYS.bob}`,
      WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    db = await connect(app.databaseUrl);
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
    await db.query('DELETE FROM webhooks');
    upstream.reset();
  });
  afterAll(async () => {
    await db.end();
    await app.close();
    await upstream.close();
  });

  const createWebhook = async (key: string, body: Record<string, unknown>) => {
    const res = await api(app.url, 'POST', '/v1/webhooks', body, auth(key));
    expect(res.status).toBe(201);
    return res.body as { id: string; url: string; events: string[]; secret: string; createdAt: string };
  };
  /** Runs a prompt to its end as `key`; answers the run's id. */
  const runTo = async (key: string, answer: string) => {
    upstream.enqueue(text(answer));
    const events = await (
      await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Hi', tools: [] }, headers: auth(key) })
    ).rest();
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    return events[0].data.runId as string;
  };

  it('a receiver that answers 500 once gets the event again: same webhook-id, a signature the library verifies; both attempts listed', async () => {
    const hooks = await receiver();
    hooks.answer(500);
    const created = await createWebhook(KEYS.alice, { url: hooks.url, events: ['run.completed'] });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(created.secret.slice('whsec_'.length), 'base64')).toHaveLength(24);

    const runId = await runTo(KEYS.alice, 'Hello.');
    const [first, second] = await hooks.nth(2);
    expect(second.id).toBe(first.id);
    expect(second.body).toBe(first.body);
    for (const r of [first, second]) {
      const event = verified(created.secret, r);
      expect(event.type).toBe('run.completed');
      expect(new Date(event.timestamp).toISOString()).toBe(event.timestamp);
      expect(event.data).toMatchObject({
        runId,
        status: 'completed',
        usage: { promptTokens: expect.any(Number) },
      });
      expect(r.headers['content-type']).toBe('application/json');
    }
    // Another secret does not verify it: the signature is of this body under this key.
    expect(() => verified(`whsec_${Buffer.alloc(24, 1).toString('base64')}`, second)).toThrow();

    let listed: any[] = [];
    await eventually(async () => {
      listed = (
        await api(app.url, 'GET', `/v1/webhooks/${created.id}/deliveries`, undefined, auth(KEYS.alice))
      ).body.data;
      return listed.length === 2;
    });
    expect(listed).toEqual([
      {
        webhookId: created.id,
        type: 'run.completed',
        attempt: 2,
        status: 200,
        error: null,
        at: expect.any(String),
      },
      {
        webhookId: created.id,
        type: 'run.completed',
        attempt: 1,
        status: 500,
        error: 'answered 500',
        at: expect.any(String),
      },
    ]);
  });

  it('a run that waits for an approval, then is cancelled, tells of both: run.requires_action, then run.cancelled', async () => {
    const hooks = await receiver();
    const created = await createWebhook(KEYS.alice, {
      url: hooks.url,
      events: ['run.requires_action', 'run.cancelled'],
    });
    upstream.enqueue(toolCalls([{ name: 'write_file', arguments: { path: 'notes.txt', content: 'hi' } }]));
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'Write it' },
      headers: auth(KEYS.alice),
    });
    const seen = await stream.until('tool_approval_required');
    stream.close();
    const runId = seen[0].data.runId as string;

    const [waiting] = await hooks.nth(1);
    expect(verified(created.secret, waiting)).toMatchObject({
      type: 'run.requires_action',
      data: { runId, status: 'requires_action' },
    });
    expect((await api(app.url, 'POST', `/v1/runs/${runId}/cancel`, undefined, auth(KEYS.alice))).status).toBe(
      202,
    );
    const [, cancelled] = await hooks.nth(2);
    expect(cancelled.id).not.toBe(waiting.id);
    expect(verified(created.secret, cancelled)).toMatchObject({
      type: 'run.cancelled',
      data: { runId, status: 'cancelled' },
    });
  });

  it('a receiver that never answers: the attempt ends after 10 s and the event comes again', async () => {
    const hooks = await receiver();
    hooks.answer('hang');
    const created = await createWebhook(KEYS.alice, { url: hooks.url, events: ['*'] });
    await runTo(KEYS.alice, 'Hello.');
    const [first, second] = await hooks.nth(2, 40_000);
    expect(second.id).toBe(first.id);
    const listed = (
      await api(app.url, 'GET', `/v1/webhooks/${created.id}/deliveries`, undefined, auth(KEYS.alice))
    ).body.data;
    expect(listed.at(-1)).toMatchObject({ attempt: 1, status: null, error: 'no answer within 10 s' });
  }, 60_000);

  it('a redirect is not followed: the attempt fails with its status, the place it points to gets nothing', async () => {
    const hooks = await receiver();
    const elsewhere = await receiver();
    hooks.answer({ redirect: elsewhere.url });
    const created = await createWebhook(KEYS.alice, { url: hooks.url, events: ['*'] });
    await runTo(KEYS.alice, 'Hello.');
    let listed: any[] = [];
    await eventually(async () => {
      listed = (
        await api(app.url, 'GET', `/v1/webhooks/${created.id}/deliveries`, undefined, auth(KEYS.alice))
      ).body.data;
      return listed.length > 0;
    });
    expect(listed[0]).toMatchObject({ attempt: 1, status: 302, error: 'answered 302' });
    expect(elsewhere.received).toEqual([]);
  });

  it('a given secret is its UTF-8 bytes (or, after whsec_, base64); secrets are shown only at creation', async () => {
    const plain = await receiver();
    const based = await receiver();
    const key = Buffer.from('0123456789abcdef0123456789abcdef');
    const a = await createWebhook(KEYS.alice, { url: plain.url, events: ['*'], secret: 'pässwörd' });
    const b = await createWebhook(KEYS.alice, {
      url: based.url,
      events: ['run.failed', 'run.completed'],
      secret: `whsec_${key.toString('base64')}`,
    });
    expect(a.secret).toBe('pässwörd');

    await runTo(KEYS.alice, 'Hello.');
    const [toPlain] = await plain.nth(1);
    const [toBased] = await based.nth(1);
    expect(verified(new Uint8Array(Buffer.from('pässwörd', 'utf8')), toPlain).type).toBe('run.completed');
    expect(verified(new Uint8Array(key), toBased).type).toBe('run.completed');

    const list = await api(app.url, 'GET', '/v1/webhooks', undefined, auth(KEYS.alice));
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([
      { id: a.id, url: plain.url, events: ['*'], createdAt: a.createdAt },
      { id: b.id, url: based.url, events: ['run.failed', 'run.completed'], createdAt: b.createdAt },
    ]);
    expect(JSON.stringify(list.body)).not.toContain('pässwörd');
    expect(JSON.stringify(list.body)).not.toContain(key.toString('base64'));
  });

  it("a key's webhooks are told of its own runs only, and another key can neither list, read nor delete them", async () => {
    const alices = await receiver();
    const bobs = await receiver();
    const alice = await createWebhook(KEYS.alice, { url: alices.url, events: ['*'] });
    const bob = await createWebhook(KEYS.bob, { url: bobs.url, events: ['*'] });
    // Its first attempt fails, so the row is still owed when it is read below (a delivered one is deleted).
    alices.answer(500);

    const alicesRun = await runTo(KEYS.alice, 'For Alice.');
    // The outbox row is stored with the run's end, so once the run has ended its events are all owed.
    const owed = await db.query(`SELECT webhook_id, run_id FROM webhook_deliveries WHERE run_id = $1`, [
      alicesRun,
    ]);
    expect(owed.rows).toEqual([{ webhook_id: alice.id, run_id: alicesRun }]);
    const bobsRun = await runTo(KEYS.bob, 'For Bob.');

    const [toAlice] = await alices.nth(1);
    const [toBob] = await bobs.nth(1);
    expect(verified(alice.secret, toAlice).data.runId).toBe(alicesRun);
    expect(verified(bob.secret, toBob).data.runId).toBe(bobsRun);

    expect(
      (await api(app.url, 'GET', '/v1/webhooks', undefined, auth(KEYS.bob))).body.data.map((w: any) => w.id),
    ).toEqual([bob.id]);
    expect(
      (await api(app.url, 'GET', `/v1/webhooks/${alice.id}/deliveries`, undefined, auth(KEYS.bob))).status,
    ).toBe(404);
    expect((await api(app.url, 'DELETE', `/v1/webhooks/${alice.id}`, undefined, auth(KEYS.bob))).status).toBe(
      404,
    );
    expect(
      (await api(app.url, 'DELETE', `/v1/webhooks/${alice.id}`, undefined, auth(KEYS.alice))).status,
    ).toBe(204);
    expect(
      (await api(app.url, 'GET', `/v1/webhooks/${alice.id}/deliveries`, undefined, auth(KEYS.alice))).status,
    ).toBe(404);
  });

  it('an event a webhook did not ask for owes it nothing; an X-End-User sees only its own webhooks', async () => {
    const hooks = await receiver();
    const failedOnly = await createWebhook(KEYS.alice, { url: hooks.url, events: ['run.failed'] });
    const runId = await runTo(KEYS.alice, 'Fine.');
    const owed = await db.query(`SELECT 1 FROM webhook_deliveries WHERE run_id = $1`, [runId]);
    expect(owed.rows).toEqual([]);

    const res = await api(
      app.url,
      'POST',
      '/v1/webhooks',
      { url: hooks.url, events: ['*'] },
      {
        ...auth(KEYS.alice),
        'x-end-user': 'u1',
      },
    );
    expect(res.status).toBe(201);
    const seen = async (headers: Record<string, string>) =>
      (
        await api(app.url, 'GET', '/v1/webhooks', undefined, { ...auth(KEYS.alice), ...headers })
      ).body.data.map((w: any) => w.id);
    expect(await seen({ 'x-end-user': 'u1' })).toEqual([res.body.id]);
    expect(await seen({ 'x-end-user': 'u2' })).toEqual([]);
    expect(await seen({})).toEqual([failedOnly.id, res.body.id]);
  });

  it('refuses bodies that are not a webhook: 400', async () => {
    const bad = [
      { url: 'ftp://example.com/x', events: ['*'] },
      { url: 'not a url', events: ['*'] },
      { url: 'https://user:pw@example.com/x', events: ['*'] },
      { url: 'http://127.0.0.1:9/x', events: [] },
      { url: 'http://127.0.0.1:9/x', events: ['run.started'] },
      { url: 'http://127.0.0.1:9/x', events: ['*'], secret: 'whsec_not base64!' },
      { url: 'http://127.0.0.1:9/x', events: ['*'], secret: '' },
      { url: 'http://127.0.0.1:9/x', events: ['*'], extra: 1 },
    ];
    for (const body of bad) {
      const res = await api(app.url, 'POST', '/v1/webhooks', body, auth(KEYS.alice));
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
    }
  });
});
