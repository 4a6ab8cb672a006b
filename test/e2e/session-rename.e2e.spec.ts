import { FakeUpstream, chunksThen, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { api, openStream } from '../support/sse-client';

const ALICE = { authorization: 'Bearer alice-secret-123' };
const BOB = { authorization: 'Bearer bob-secret-456' };

/** PATCH /v1/sessions/:id (a title), and what GET /v1/sessions/:id adds for a page: the active run, each message's run. */
describe('renaming sessions and reading their active run (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      API_KEYS: 'alice:alice-secret-123,bob:bob-secret-456',
    });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  it("renames the owner's session, and refuses another key's (404) and a bad title (400)", async () => {
    const created = await api(app.url, 'POST', '/v1/sessions', { title: 'Old name' }, ALICE);
    const id = (created.body as { id: string }).id;

    const renamed = await api(app.url, 'PATCH', `/v1/sessions/${id}`, { title: 'New name' }, ALICE);
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id, title: 'New name' });
    const listed = await api(app.url, 'GET', '/v1/sessions', undefined, ALICE);
    expect((listed.body as { data: { id: string; title: string }[] }).data).toContainEqual(
      expect.objectContaining({ id, title: 'New name' }),
    );

    expect((await api(app.url, 'PATCH', `/v1/sessions/${id}`, { title: 'Mine now' }, BOB)).status).toBe(404);
    expect((await api(app.url, 'PATCH', `/v1/sessions/${id}`, { title: '' }, ALICE)).status).toBe(400);
    expect((await api(app.url, 'PATCH', `/v1/sessions/${id}`, { title: 42 }, ALICE)).status).toBe(400);
    expect((await api(app.url, 'PATCH', `/v1/sessions/${id}`, {}, ALICE)).status).toBe(400);
    const unchanged = await api(app.url, 'GET', `/v1/sessions/${id}`, undefined, ALICE);
    expect(unchanged.body).toMatchObject({ title: 'New name' });
  });

  it('names the running run of a session and the run of each message', async () => {
    upstream.enqueue(chunksThen(['Still ', 'talking'], 'hang'));
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'talk' }, headers: ALICE });
    const runId = stream.headers.get('x-run-id')!;
    const sessionId = stream.headers.get('x-session-id')!;
    const during = await api(app.url, 'GET', `/v1/sessions/${sessionId}`, undefined, ALICE);
    expect(during.body).toMatchObject({ activeRunId: runId });

    await api(app.url, 'POST', `/v1/runs/${runId}/cancel`, undefined, ALICE);
    await stream.rest();
    const after = await api(app.url, 'GET', `/v1/sessions/${sessionId}`, undefined, ALICE);
    const body = after.body as { activeRunId: string | null; messages: { role: string; runId?: string }[] };
    expect(body.activeRunId).toBeNull();
    expect(body.messages.filter((m) => m.role !== 'system').map((m) => m.runId)).toEqual([runId, runId]);
  });

  it('lists a session without a title with the start of its first prompt (preview); one without a prompt has none', async () => {
    const prompt = `Why does the build fail on CI? ${'x'.repeat(100)}`;
    upstream.enqueue(text('Because.'));
    const untitled = await openStream(`${app.url}/v1/chat`, { body: { prompt }, headers: ALICE });
    await untitled.rest();
    const titled = await api(app.url, 'POST', '/v1/sessions', { title: 'Named' }, ALICE);

    const listed = await api(app.url, 'GET', '/v1/sessions', undefined, ALICE);
    const data = (listed.body as { data: { id: string; title: string | null; preview?: string }[] }).data;
    expect(data.find((s) => s.id === untitled.headers.get('x-session-id'))).toMatchObject({
      title: null,
      preview: prompt.slice(0, 80),
    });
    const named = data.find((s) => s.id === (titled.body as { id: string }).id)!;
    expect(named.title).toBe('Named');
    expect(named.preview).toBeUndefined();
    const bobs = await api(app.url, 'GET', '/v1/sessions', undefined, BOB);
    expect((bobs.body as { data: unknown[] }).data).toEqual([]);
  });
});
