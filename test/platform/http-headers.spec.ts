import { startApp, type TestApp } from '../support/app';

const KEY = 'platform-test-key';

describe('security headers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ API_KEYS: `tester:${KEY}` });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('sets them on answers and on errors', async () => {
    for (const res of [
      await fetch(`${t.url}/v1/sessions`, { headers: { authorization: `Bearer ${KEY}` } }),
      await fetch(`${t.url}/v1/sessions`),
      await fetch(`${t.url}/health/live`),
    ]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(res.headers.get('x-powered-by')).toBeNull();
    }
  });

  it('serves the documentation UI with scripts the Content-Security-Policy allows', async () => {
    const res = await fetch(`${t.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('upgrade-insecure-requests');
    const html = await res.text();
    // Only same-origin script files: no inline script the policy would block.
    expect(html).not.toMatch(/<script>(?!<\/script>)/);
    const scripts = [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts).toEqual(['/docs/swagger-ui-bundle.js', '/docs/swagger-ui-init.js']);
    for (const src of [...scripts, '/docs/swagger-ui.css']) {
      const asset = await fetch(`${t.url}${src}`);
      expect({ src, status: asset.status }).toEqual({ src, status: 200 });
    }
    expect(await (await fetch(`${t.url}/docs/swagger-ui-init.js`)).text()).toContain('"/docs/json"');
  });
});

describe('CORS', () => {
  const ORIGIN = 'https://app.example.com';

  it('is closed by default: no CORS headers', async () => {
    const t = await startApp({ API_KEYS: `tester:${KEY}` });
    try {
      const res = await fetch(`${t.url}/v1/sessions`, {
        headers: { authorization: `Bearer ${KEY}`, origin: ORIGIN },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await t.close();
    }
  });

  it('echoes a configured origin, answers its preflight and refuses others', async () => {
    const t = await startApp({
      API_KEYS: `tester:${KEY}`,
      CORS_ORIGINS: `${ORIGIN},https://other.example.com`,
    });
    try {
      const res = await fetch(`${t.url}/v1/sessions`, {
        headers: { authorization: `Bearer ${KEY}`, origin: ORIGIN },
      });
      expect(res.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(res.headers.get('access-control-expose-headers')).toContain('X-Request-Id');

      const preflight = await fetch(`${t.url}/v1/chat`, {
        method: 'OPTIONS',
        headers: {
          origin: ORIGIN,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');

      // A streamed answer (the reply is taken over by the SSE writer) keeps the CORS headers, and lets
      // browser code read which run and session it is.
      const stream = await fetch(`${t.url}/v1/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, origin: ORIGIN, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'hi', tools: [] }),
      });
      expect(stream.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      const exposed = stream.headers.get('access-control-expose-headers') ?? '';
      for (const name of ['X-Run-Id', 'X-Session-Id', 'X-Request-Id', 'Retry-After'])
        expect(exposed).toContain(name);
      expect(stream.headers.get('x-run-id')).toMatch(/^[0-9a-f-]{36}$/);
      await stream.body?.cancel();

      const idempotent = await fetch(`${t.url}/v1/chat`, {
        method: 'OPTIONS',
        headers: {
          origin: ORIGIN,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'idempotency-key,last-event-id',
        },
      });
      expect(idempotent.headers.get('access-control-allow-headers')?.toLowerCase()).toContain(
        'idempotency-key',
      );

      const stranger = await fetch(`${t.url}/v1/sessions`, {
        headers: { authorization: `Bearer ${KEY}`, origin: 'https://evil.example' },
      });
      expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await t.close();
    }
  });
});
