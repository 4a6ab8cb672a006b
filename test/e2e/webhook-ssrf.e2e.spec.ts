import { randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { FakeUpstream, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { connect } from '../support/database';
import { eventually } from '../support/eventually';
import { api, openStream } from '../support/sse-client';
import { WebhookReceiver } from '../support/webhook-receiver';
import { isPublicAddress } from '../../src/webhooks/webhook-address';

describe('webhook addresses', () => {
  it('public addresses pass, in every form; the ranges that lead inside do not', () => {
    for (const ok of [
      '8.8.8.8',
      '1.1.1.1',
      '100.128.0.1',
      '172.32.0.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
    ]) {
      expect([ok, isPublicAddress(ok)]).toEqual([ok, true]);
    }
    for (const no of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:a00:1',
      '::ffff:169.254.169.254',
      'not-an-address',
    ]) {
      expect([no, isPublicAddress(no)]).toEqual([no, false]);
    }
  });
});

describe('webhooks and private addresses (e2e, WEBHOOK_ALLOW_PRIVATE unset)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  let db: Client;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    receiver = await WebhookReceiver.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl });
    db = await connect(app.databaseUrl);
  });
  afterAll(async () => {
    await db.end();
    await app.close();
    await receiver.close();
    await upstream.close();
  });

  it('refuses at creation a URL whose host is, or resolves to, a loopback, private or link-local address: 400', async () => {
    const port = receiver.port;
    for (const url of [
      `http://127.0.0.1:${port}/hook`,
      `http://localhost:${port}/hook`,
      'http://10.1.2.3/',
      'http://172.16.0.1/',
      'http://192.168.1.1/',
      'http://169.254.169.254/latest/meta-data',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://[::1]/',
      'http://[::]/',
      'http://[fd00::1]/',
      'http://[fe80::1]/',
      'http://[::ffff:127.0.0.1]/',
      'https://[::ffff:10.0.0.1]/',
    ]) {
      const res = await api(app.url, 'POST', '/v1/webhooks', { url, events: ['*'] });
      expect([url, res.status]).toEqual([url, 400]);
      expect(res.body.message).toMatch(/refused/);
    }
    expect((await api(app.url, 'GET', '/v1/webhooks')).body.data).toEqual([]);
  });

  it('refuses again at delivery, after resolving: a name that now resolves to loopback gets no request', async () => {
    // As a name that resolved to a public address when the webhook was created, and to loopback now.
    const id = randomUUID();
    await db.query(
      `INSERT INTO webhooks (id, owner, url, events, secret) VALUES ($1, 'local', $2, '{*}', 'secret')`,
      [id, `http://localhost:${receiver.port}/hook`],
    );
    upstream.enqueue(text('Hello.'));
    const events = await (
      await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Hi', tools: [] } })
    ).rest();
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });

    let listed: any[] = [];
    await eventually(async () => {
      listed = (await api(app.url, 'GET', `/v1/webhooks/${id}/deliveries`)).body.data;
      return listed.length > 0;
    });
    expect(listed[0]).toMatchObject({ webhookId: id, type: 'run.completed', attempt: 1, status: null });
    expect(listed[0].error).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback/);
    // The attempt is recorded after the refusal, so no request went out before it.
    expect(receiver.received).toEqual([]);
  });
});
