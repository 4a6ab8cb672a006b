import { startApp, type TestApp } from '../support/app';
import { FakeUpstream } from '../support/fake-upstream';
import { api } from '../support/sse-client';

/**
 * A session's `model` lands in span names, log lines and every run row: it is bounded like a
 * title (200 characters), and a longer one is the 400 of any invalid option — before a session,
 * a run or a model call exists.
 */
describe('the length of a model name (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  const named = (chars: number) => `openai/${'m'.repeat(chars - 'openai/'.length)}`;

  it('takes a 200-character model name', async () => {
    const res = await api(app.url, 'POST', '/v1/sessions', { model: named(200) });
    expect(res.status).toBe(201);
    expect(res.body.model).toBe(named(200));
  });

  it('answers 400 naming model to a 201-character model name on a session and on a chat, and calls no model', async () => {
    const session = await api(app.url, 'POST', '/v1/sessions', { model: named(201) });
    expect(session.status).toBe(400);
    expect(JSON.stringify(session.body)).toContain('model must be shorter than or equal to 200 characters');

    const chat = await api(app.url, 'POST', '/v1/chat', { prompt: 'hi', model: named(100_000) });
    expect(chat.status).toBe(400);
    expect(JSON.stringify(chat.body)).toContain('model must be shorter than or equal to 200 characters');
    expect(upstream.requests).toHaveLength(0);
  });
});
