import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from '../support/app';

const KEY = 'platform-test-key';
const auth = { authorization: `Bearer ${KEY}` };

describe('request bodies', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ API_KEYS: `tester:${KEY}`, BODY_LIMIT_BYTES: '2048' });
  });
  afterAll(async () => {
    await t?.close();
  });

  const post = (path: string, body: string | undefined, contentType?: string) =>
    fetch(`${t.url}${path}`, {
      method: 'POST',
      headers: contentType === undefined ? auth : { ...auth, 'content-type': contentType },
      body,
    });

  it('answers 415 to a text/plain body', async () => {
    const res = await post('/v1/chat', JSON.stringify({ prompt: 'hi' }), 'text/plain');
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual({
      statusCode: 415,
      message: expect.stringContaining('application/json'),
      error: 'Unsupported Media Type',
    });
  });

  it('answers 415 to a form body', async () => {
    const res = await post('/v1/chat', 'prompt=hi', 'application/x-www-form-urlencoded');
    expect(res.status).toBe(415);
  });

  it('answers 415 to a body without a Content-Type', async () => {
    const res = await fetch(`${t.url}/v1/chat`, {
      method: 'POST',
      headers: auth,
      body: new Blob([JSON.stringify({ prompt: 'hi' })]),
    });
    expect(res.status).toBe(415);
  });

  it('needs no Content-Type for a request without a body', async () => {
    const res = await post(`/v1/runs/${randomUUID()}/cancel`, undefined);
    expect(res.status).toBe(404);
  });

  it('accepts application/json with a charset', async () => {
    const res = await post('/v1/sessions', '{}', 'application/json; charset=utf-8');
    expect(res.status).toBe(201);
  });

  it('answers 413 with the limit to a body over BODY_LIMIT_BYTES', async () => {
    const res = await post('/v1/chat', JSON.stringify({ prompt: 'x'.repeat(4096) }), 'application/json');
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      statusCode: 413,
      message: 'Request body is larger than the limit of 2048 bytes (BODY_LIMIT_BYTES)',
      error: 'Payload Too Large',
    });
  });

  it('answers 400 in the Nest shape to malformed JSON', async () => {
    const res = await post('/v1/chat', '{"prompt": ', 'application/json');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ statusCode: 400, message: expect.any(String), error: 'Bad Request' });
  });

  it('lists the fields a body gets wrong, nested ones with their path', async () => {
    const res = await post(
      '/v1/chat',
      JSON.stringify({
        prompt: 42,
        extra: true,
        clientTools: [{ type: 'function', function: { name: 7 } }],
      }),
      'application/json',
    );
    expect(res.status).toBe(400);
    const body = (await res.json()) as { statusCode: number; message: string[]; error: string };
    expect(body.error).toBe('Bad Request');
    expect(body.message).toEqual(
      expect.arrayContaining([
        'prompt must be a string or a list of parts',
        'property extra should not exist',
        expect.stringMatching(/^clientTools\.0\.function\.name /),
      ]),
    );
  });

  it('coerces nothing: a number is not a string, "yes" is not a boolean', async () => {
    const res = await post(
      `/v1/runs/${randomUUID()}/tool-calls/call_1/approval`,
      JSON.stringify({ approve: 'yes' }),
      'application/json',
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string[] }).message).toEqual(
      expect.arrayContaining([expect.stringMatching(/^approve must be a boolean/)]),
    );
  });
});
