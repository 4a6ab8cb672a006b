import { FakeUpstream, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { answerOf, api, openStream } from '../support/sse-client';

const KEY = 'azure-key-7f3c9b21d04e';

/**
 * The fourth provider, a folder and one line in providers/index.ts: an Azure OpenAI resource's v1 API
 * (`azure/<deployment>`), Chat Completions at the resource's own URL, with the deployment as the model.
 */
describe('the azure provider (e2e)', () => {
  let azure: FakeUpstream;
  let openai: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    azure = await FakeUpstream.start({ basePath: '/openai/v1' });
    openai = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: openai.baseUrl,
      AZURE_OPENAI_API_KEY: KEY,
      AZURE_OPENAI_BASE_URL: azure.baseUrl,
      LLM_MAX_RETRIES: '0',
    });
  });
  afterAll(async () => {
    await app?.close();
    await azure?.close();
    await openai?.close();
  });

  it("runs a session on a deployment: the resource's URL, its key, the deployment as the model", async () => {
    azure.enqueue(text('From Azure.'));
    const session = await api(app.url, 'POST', '/v1/sessions', { model: 'azure/team-gpt-4.1' });
    expect(session.status).toBe(201);
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { sessionId: session.body.id, prompt: 'Hello' },
    });
    const events = await stream.rest(10_000);
    expect(answerOf(events)).toBe('From Azure.');
    expect(azure.requests).toHaveLength(1);
    expect(openai.requests).toHaveLength(0);
    expect(azure.requests[0].body).toMatchObject({ model: 'team-gpt-4.1', stream: true });
    expect(azure.requests[0].headers.authorization).toBe(`Bearer ${KEY}`);
    expect((await api(app.url, 'GET', '/v1/models')).body.providers).toContainEqual({
      name: 'azure',
      baseUrl: azure.baseUrl,
    });
  });

  it('refuses a session on azure when its URL is not set, naming both variables', async () => {
    const bare = await startApp({ OPENAI_BASE_URL: openai.baseUrl, AZURE_OPENAI_API_KEY: KEY });
    try {
      const res = await api(bare.url, 'POST', '/v1/sessions', { model: 'azure/team-gpt-4.1' });
      expect(res.status).toBe(400);
      expect(String(res.body.message)).toMatch(
        /azure is not configured: set AZURE_OPENAI_API_KEY and AZURE_OPENAI_BASE_URL/,
      );
      expect(JSON.stringify(res.body)).not.toContain(KEY);
    } finally {
      await bare.close();
    }
  });
});
