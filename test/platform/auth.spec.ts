import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from '../support/app';
import { rawRequest } from './raw-http';

const ALICE = 'alice-secret-0123456789';
const BOB = 'bob-secret-9876543210';

describe('API keys', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ API_KEYS: `alice:${ALICE},bob:${BOB}` });
  });
  afterAll(async () => {
    await t?.close();
  });

  const get = (path: string, key?: string) =>
    fetch(`${t.url}${path}`, { headers: key === undefined ? {} : { authorization: `Bearer ${key}` } });

  it('answers 401 in the Nest error shape to a /v1 request without a key', async () => {
    const res = await get('/v1/sessions');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await res.json()).toEqual({
      statusCode: 401,
      message: expect.stringContaining('Authorization: Bearer'),
      error: 'Unauthorized',
    });
  });

  it('answers 401 to a wrong key, a key of another scheme and a prefix of a real key', async () => {
    for (const authorization of [
      'Bearer wrong',
      `Basic ${ALICE}`,
      `Bearer ${ALICE.slice(0, -1)}`,
      `Bearer ${ALICE}x`,
    ]) {
      const res = await fetch(`${t.url}/v1/sessions`, { headers: { authorization } });
      expect(res.status).toBe(401);
    }
  });

  it('guards /v1/tools too', async () => {
    expect((await get('/v1/tools')).status).toBe(401);
    expect((await get('/v1/tools', BOB)).status).toBe(200);
  });

  it('answers 401 before validating the body', async () => {
    const res = await fetch(`${t.url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 42, unknown: true }),
    });
    expect(res.status).toBe(401);
  });

  it('answers 401 before reading a body that is too large or not JSON', async () => {
    const notJson = await fetch(`${t.url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hi',
    });
    expect(notJson.status).toBe(401);
    const tooLarge = await fetch(`${t.url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'x'.repeat(t.config.bodyLimitBytes) }),
    });
    expect(tooLarge.status).toBe(401);
  });

  it('answers 401, not 404, for a resource or a route that does not exist', async () => {
    expect((await get(`/v1/sessions/${randomUUID()}`)).status).toBe(401);
    expect((await get('/v1/no-such-route')).status).toBe(401);
    expect((await get('/v1/no-such-route', ALICE)).status).toBe(404);
  });

  it('accepts a valid key, whatever the case of the scheme', async () => {
    expect((await get('/v1/sessions', ALICE)).status).toBe(200);
    const res = await fetch(`${t.url}/v1/sessions`, { headers: { authorization: `bearer ${BOB}` } });
    expect(res.status).toBe(200);
  });

  it("gives what a key creates to that key's name only", async () => {
    const created = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect((await get(`/v1/sessions/${id}`, ALICE)).status).toBe(200);
    expect((await get(`/v1/sessions/${id}`, BOB)).status).toBe(404);
  });

  it('leaves health, metrics and the API documentation open', async () => {
    for (const path of ['/health/live', '/health/ready', '/metrics', '/docs', '/docs/json']) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
  });

  it('leaves the playground page and its assets open, and reaches nothing else through /assets', async () => {
    // The page is built by `npm run build` (npm test builds first).
    for (const path of ['/', '/assets/app.js', '/assets/app.css']) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
    for (const path of ['/assets/index.html', '/assets/..%2Fv1%2Fsessions', '/assets/%2E%2E%2Findex.html']) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
    expect((await get('/v1/sessions')).status).toBe(401);
  });

  it('answers requests for any Host while keys are configured', async () => {
    const res = await rawRequest(t.url, { path: '/health/live', headers: { host: 'api.example.com' } });
    expect(res.status).toBe(200);
  });
});

describe('without API keys', () => {
  let t: TestApp;
  let port: string;
  beforeAll(async () => {
    t = await startApp({});
    port = new URL(t.url).port;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('serves /v1 without a key', async () => {
    expect((await fetch(`${t.url}/v1/sessions`)).status).toBe(200);
  });

  it('answers 421 to a request addressed to a non-loopback name (DNS rebinding)', async () => {
    for (const host of [
      'evil.example',
      `evil.example:${port}`,
      'localhost.evil.example',
      '192.168.1.10',
      'evil.example@localhost',
    ]) {
      const res = await rawRequest(t.url, { path: '/v1/sessions', headers: { host } });
      expect({ host, status: res.status }).toEqual({ host, status: 421 });
      expect(JSON.parse(res.body)).toEqual({
        statusCode: 421,
        message: expect.stringContaining('loopback'),
        error: 'Misdirected Request',
      });
    }
  });

  it('answers 421 on every route, health included', async () => {
    const res = await rawRequest(t.url, { path: '/health/live', headers: { host: 'evil.example' } });
    expect(res.status).toBe(421);
  });

  it('answers requests addressed to a loopback name, with or without a port', async () => {
    for (const host of [
      `localhost:${port}`,
      'localhost',
      `127.0.0.1:${port}`,
      '127.1.2.3',
      `[::1]:${port}`,
      `app.localhost:${port}`,
    ]) {
      const res = await rawRequest(t.url, { path: '/v1/sessions', headers: { host } });
      expect({ host, status: res.status }).toEqual({ host, status: 200 });
    }
  });
});
