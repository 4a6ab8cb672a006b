import { startApp, type TestApp } from '../support/app';
import { connect } from '../support/database';
import { eventually } from '../support/eventually';

describe('observability', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ API_KEYS: 'tester:platform-test-key' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('exposes Prometheus metrics with the loopwright_ series', async () => {
    const res = await fetch(`${t.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain('# TYPE loopwright_runs_started_total counter');
    expect(text).toContain('loopwright_active_runs');
    expect(text).toContain('process_cpu_seconds_total');
  });

  it('answers liveness and readiness while the database answers', async () => {
    const live = await fetch(`${t.url}/health/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toMatchObject({ status: 'ok' });
    const ready = await fetch(`${t.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ok', details: { database: { status: 'up' } } });
  });

  it('echoes an incoming x-request-id', async () => {
    const res = await fetch(`${t.url}/health/live`, { headers: { 'x-request-id': 'trace-abc.123' } });
    expect(res.headers.get('x-request-id')).toBe('trace-abc.123');
  });

  it('gives a request without one a new uuid, errors included', async () => {
    const ok = await fetch(`${t.url}/health/live`);
    const denied = await fetch(`${t.url}/v1/sessions`);
    expect(denied.status).toBe(401);
    for (const res of [ok, denied]) {
      expect(res.headers.get('x-request-id')).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      );
    }
    expect(ok.headers.get('x-request-id')).not.toBe(denied.headers.get('x-request-id'));
  });

  it('replaces an x-request-id that is not a plain token', async () => {
    const res = await fetch(`${t.url}/health/live`, { headers: { 'x-request-id': 'a b\tc' } });
    expect(res.headers.get('x-request-id')).not.toBe('a b\tc');
  });
});

describe('readiness', () => {
  it('answers 503 in the error shape once the database stops answering', async () => {
    const t = await startApp({ API_KEYS: 'tester:platform-test-key' });
    const database = new URL(t.databaseUrl).pathname.slice(1);
    const admin = await connect(new URL('/postgres', t.databaseUrl).toString());
    try {
      await admin.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [
        database,
      ]);
      const res = await fetch(`${t.url}/health/ready`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({
        statusCode: 503,
        message: expect.stringContaining('database'),
        error: 'Service Unavailable',
      });
      expect((await fetch(`${t.url}/health/live`)).status).toBe(200);
    } finally {
      await admin.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`);
      // Let the app's connections come back before closing it, so nothing reconnects after the test.
      await eventually(async () => (await fetch(`${t.url}/health/ready`)).status === 200);
      await eventually(async () => {
        const { rowCount } = await admin.query(
          "SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND application_name = 'loopwright-listen'",
          [database],
        );
        return rowCount === 1;
      });
      await admin.end();
      await t.close();
    }
  });
});
