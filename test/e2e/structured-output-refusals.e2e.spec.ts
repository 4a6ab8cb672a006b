import { FakeUpstream, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { api } from '../support/sse-client';

/** Each refusal, and what its message says is wrong. */
const BAD: [string, unknown, string][] = [
  [
    'not an object schema',
    { type: 'json_schema', schema: { type: 'array', items: { type: 'string' } } },
    'responseFormat.schema must describe an object',
  ],
  [
    'no root type',
    { type: 'json_schema', schema: { properties: { a: { type: 'string' } } } },
    'responseFormat.schema must describe an object',
  ],
  [
    'a $ref outside it',
    {
      type: 'json_schema',
      schema: { type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } },
    },
    'responseFormat.schema has a $ref outside itself',
  ],
  [
    'larger than 64 KiB',
    { type: 'json_schema', schema: { type: 'object', description: 'x'.repeat(70_000) } },
    'responseFormat.schema is larger than 64 KiB',
  ],
  [
    'a name providers refuse',
    { type: 'json_schema', name: 'has space', schema: { type: 'object' } },
    'responseFormat.name must be 1–64 letters',
  ],
  [
    'another type',
    { type: 'json_object', schema: { type: 'object' } },
    'responseFormat.type must be one of the following values: json_schema',
  ],
  [
    'a backtracking pattern',
    {
      type: 'json_schema',
      schema: { type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+\\1$' } } },
    },
    'responseFormat.schema: ',
  ],
  [
    'a schema ajv refuses',
    { type: 'json_schema', schema: { type: 'object', properties: { a: { type: 'strin' } } } },
    'responseFormat.schema: ',
  ],
];

/** A responseFormat the server cannot use is a 400 naming responseFormat, wherever it is sent; nothing is stored. */
describe('structured output refusals (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  let sessionId: string;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    upstream.fallback = text('never');
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl });
    sessionId = (await api(app.url, 'POST', '/v1/sessions', {})).body.id as string;
  });
  afterAll(async () => {
    await app?.close();
    await upstream.close();
  });

  it('a usable one is taken everywhere (the refusals below are of the schema, not of the field)', async () => {
    const responseFormat = { type: 'json_schema', name: 'ok', schema: { type: 'object' } };
    expect((await api(app.url, 'POST', '/v1/sessions', { responseFormat })).status).toBe(201);
  });

  it.each(BAD)(
    '%s: 400 on POST /v1/sessions, /v1/chat (new and existing session) and /messages',
    async (_, responseFormat, says) => {
      const answers = [
        await api(app.url, 'POST', '/v1/sessions', { responseFormat }),
        await api(app.url, 'POST', '/v1/chat', { prompt: 'Hi.', responseFormat }),
        await api(app.url, 'POST', '/v1/chat', { prompt: 'Hi.', sessionId, responseFormat }),
        await api(app.url, 'POST', `/v1/sessions/${sessionId}/messages`, { content: 'Hi.', responseFormat }),
      ];
      for (const res of answers) {
        expect(res.status).toBe(400);
        // A string, or Nest's list of validation messages: one of them begins with what is wrong.
        const messages = ([] as unknown[]).concat(res.body.message).map(String);
        expect(messages.some((m) => m.startsWith(says))).toBe(true);
      }
      expect(upstream.requests).toHaveLength(0);
      const session = await api(app.url, 'GET', `/v1/sessions/${sessionId}`);
      expect(session.body.messages).toHaveLength(1);
    },
  );
});
