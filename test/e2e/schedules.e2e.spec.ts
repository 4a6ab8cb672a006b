import type { Client } from 'pg';
import { FakeUpstream, text, type RecordedRequest } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { connect } from '../support/database';
import { eventually } from '../support/eventually';
import { api, openStream } from '../support/sse-client';

/** The user prompt a model request carries (the first user message). */
const promptOf = (r: RecordedRequest) =>
  (r.body as { messages: { role: string; content: unknown }[] }).messages.find((m) => m.role === 'user')
    ?.content;

const ALICE = { authorization: 'Bearer alice-secret-123' };
const BOB = { authorization: 'Bearer bob-secret-456' };

/** /v1/schedules over real HTTP: CRUD, validation, scoping, and what a due time does. */
describe('schedules (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  let db: Client;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      API_KEYS: 'alice:alice-secret-123,bob:bob-secret-456',
      SESSION_MAX_QUEUE: '1',
    });
    db = await connect(app.databaseUrl);
  });
  afterEach(async () => {
    upstream.reset();
    // A test's schedules stop here: one due every minute would start runs that take a later test's
    // scripted answers.
    await db.query(`UPDATE schedules SET enabled = false`);
  });
  afterAll(async () => {
    await db.end();
    await app.close();
    await upstream.close();
  });

  const create = (body: unknown, headers: Record<string, string> = ALICE) =>
    api(app.url, 'POST', '/v1/schedules', body, headers);
  /** Makes the schedule due now, as if its time had come (the ticker claims it within ~5 s). */
  const makeDue = (id: string, ago = '1 second') =>
    db.query(`UPDATE schedules SET next_run_at = now() - $2::interval WHERE id = $1`, [id, ago]);
  const dueTimes = async (id: string) =>
    (await api(app.url, 'GET', `/v1/schedules/${id}/runs`, undefined, ALICE)).body.data as {
      runId: string | null;
      sessionId: string | null;
      status: string;
      dueAt: string;
      startedAt: string | null;
    }[];

  it('creates, reads, lists, changes and deletes; nextRunAt follows the cron in its time zone', async () => {
    const created = await create({ cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', prompt: 'Triage.' });
    expect(created.status).toBe(201);
    const s = created.body;
    expect(s).toEqual({
      id: expect.any(String),
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
      prompt: 'Triage.',
      sessionId: null,
      enabled: true,
      nextRunAt: expect.any(String),
      createdAt: expect.any(String),
    });
    // 09:00 in Berlin is 08:00 UTC in winter, 07:00 in summer; on a weekday, within a week.
    const next = new Date(s.nextRunAt);
    expect(['08:00', '07:00']).toContain(next.toISOString().slice(11, 16));
    expect(next.getTime() - Date.now()).toBeLessThan(8 * 24 * 3600_000);
    expect((await api(app.url, 'GET', `/v1/schedules/${s.id}`, undefined, ALICE)).body).toEqual(s);

    const other = (await create({ cron: '*/5 * * * *', prompt: 'Digest.' })).body;
    expect(other.timezone).toBe('UTC');
    const first = await api(app.url, 'GET', '/v1/schedules?limit=1', undefined, ALICE);
    expect(first.body.data.map((x: { id: string }) => x.id)).toEqual([other.id]);
    const second = await api(
      app.url,
      'GET',
      `/v1/schedules?limit=1&cursor=${first.body.nextCursor}`,
      undefined,
      ALICE,
    );
    expect(second.body.data.map((x: { id: string }) => x.id)).toEqual([s.id]);

    const disabled = await api(app.url, 'PATCH', `/v1/schedules/${s.id}`, { enabled: false }, ALICE);
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ enabled: false, nextRunAt: null });
    const changed = await api(
      app.url,
      'PATCH',
      `/v1/schedules/${s.id}`,
      { enabled: true, cron: '30 6 * * *', timezone: 'UTC', prompt: 'Earlier.' },
      ALICE,
    );
    expect(changed.body).toMatchObject({ enabled: true, cron: '30 6 * * *', prompt: 'Earlier.' });
    expect(new Date(changed.body.nextRunAt).toISOString().slice(11, 16)).toBe('06:30');

    expect((await api(app.url, 'DELETE', `/v1/schedules/${s.id}`, undefined, ALICE)).status).toBe(204);
    expect((await api(app.url, 'GET', `/v1/schedules/${s.id}`, undefined, ALICE)).status).toBe(404);
    expect((await api(app.url, 'DELETE', `/v1/schedules/${s.id}`, undefined, ALICE)).status).toBe(404);
  });

  it('refuses a bad cron, time zone or type (400), and what is not the caller’s (404)', async () => {
    for (const body of [
      { cron: '61 * * * *', prompt: 'x' },
      { cron: '* * * *', prompt: 'x' },
      { cron: '* * * * * *', prompt: 'x' },
      { cron: '@daily', prompt: 'x' },
      { cron: '* * * * *', timezone: 'Mars/Olympus', prompt: 'x' },
      { cron: 5, prompt: 'x' },
      { cron: '* * * * *', prompt: '' },
      { cron: '* * * * *' },
      { cron: '* * * * *', prompt: 'x', onActive: 'later' },
      { cron: '* * * * *', prompt: 'x', sessionId: 'not-a-uuid' },
    ]) {
      expect({ body, status: (await create(body)).status }).toEqual({ body, status: 400 });
    }
    const mine = (await create({ cron: '* * * * *', prompt: 'x' })).body;
    for (const patch of [{ cron: 'nope' }, { timezone: 'Nowhere/Else' }, { enabled: 'yes' }]) {
      expect((await api(app.url, 'PATCH', `/v1/schedules/${mine.id}`, patch, ALICE)).status).toBe(400);
    }

    const bobsSession = (await api(app.url, 'POST', '/v1/sessions', {}, BOB)).body.id;
    expect((await create({ cron: '* * * * *', prompt: 'x', sessionId: bobsSession })).status).toBe(404);
    for (const [method, path] of [
      ['GET', `/v1/schedules/${mine.id}`],
      ['PATCH', `/v1/schedules/${mine.id}`],
      ['DELETE', `/v1/schedules/${mine.id}`],
      ['GET', `/v1/schedules/${mine.id}/runs`],
      ['GET', '/v1/schedules/not-a-uuid'],
    ]) {
      const answer = await api(app.url, method, path, method === 'PATCH' ? { prompt: 'y' } : undefined, BOB);
      expect({ method, path, status: answer.status }).toEqual({ method, path, status: 404 });
    }
    expect((await api(app.url, 'GET', '/v1/schedules', undefined, BOB)).body.data).toEqual([]);
  });

  it('an end user sees only their own schedules; the key sees all of its own', async () => {
    const ann = { ...ALICE, 'x-end-user': 'ann' };
    const bea = { ...ALICE, 'x-end-user': 'bea' };
    const anns = (await create({ cron: '* * * * *', prompt: 'Ann.' }, ann)).body;
    expect((await api(app.url, 'GET', `/v1/schedules/${anns.id}`, undefined, bea)).status).toBe(404);
    expect((await api(app.url, 'GET', `/v1/schedules/${anns.id}`, undefined, ann)).status).toBe(200);
    expect((await api(app.url, 'GET', `/v1/schedules/${anns.id}`, undefined, ALICE)).status).toBe(200);
    const beas = (await api(app.url, 'GET', '/v1/schedules', undefined, bea)).body.data;
    expect(beas.map((x: { id: string }) => x.id)).not.toContain(anns.id);
  });

  it('a due time starts one run in a new session with the schedule’s options, listed in its runs', async () => {
    upstream.enqueue(text('Triaged.'));
    const s = (await create({ cron: '0 0 1 1 *', prompt: 'Triage.', title: 'Nightly' })).body;
    expect(await dueTimes(s.id)).toEqual([]);
    await makeDue(s.id);
    await eventually(async () => (await dueTimes(s.id)).some((d) => d.status === 'completed'), 20_000);
    const [due] = await dueTimes(s.id);
    expect(due).toMatchObject({
      runId: expect.any(String),
      sessionId: expect.any(String),
      status: 'completed',
    });
    const session = (await api(app.url, 'GET', `/v1/sessions/${due.sessionId}`, undefined, ALICE)).body;
    expect(session.title).toBe('Nightly');
    expect(session.messages.map((m: { content: string }) => m.content).slice(1)).toEqual([
      'Triage.',
      'Triaged.',
    ]);
    // The next due time is the cron's next one, not the one just done.
    const after = (await api(app.url, 'GET', `/v1/schedules/${s.id}`, undefined, ALICE)).body;
    expect(new Date(after.nextRunAt).getTime()).toBeGreaterThan(Date.now());
  });

  it('a due time whose process died between its claim and its start is started once by another tick', async () => {
    upstream.enqueue(text('Found.'));
    const s = (await create({ cron: '0 0 1 1 *', prompt: 'Lost.' })).body;
    // What a process killed right after the claim's commit leaves behind.
    await db.query(
      `INSERT INTO schedule_runs (id, schedule_id, due_at, claimed_at)
       VALUES (gen_random_uuid(), $1, now() - interval '20 seconds', now() - interval '20 seconds')`,
      [s.id],
    );
    await eventually(async () => (await dueTimes(s.id))[0].status === 'completed', 20_000);
    const [due] = await dueTimes(s.id);
    expect(due).toMatchObject({ runId: expect.any(String), sessionId: expect.any(String) });
    const runs = await db.query(`SELECT id FROM runs WHERE session_id = $1`, [due.sessionId]);
    expect(runs.rows).toEqual([{ id: due.runId }]);

    // A claimant that started the run and died before recording it: claimed again, the run is found.
    await db.query(
      `UPDATE schedule_runs SET status = 'pending', run_id = NULL, session_id = NULL, started_at = NULL,
              claimed_at = now() - interval '20 seconds' WHERE schedule_id = $1`,
      [s.id],
    );
    await eventually(async () => (await dueTimes(s.id))[0].status !== 'pending', 20_000);
    expect((await dueTimes(s.id))[0]).toMatchObject({ runId: due.runId, sessionId: due.sessionId });
    // Other schedules of this file may come due meanwhile: count what this one's prompt started.
    expect(upstream.requests.filter((r) => promptOf(r) === 'Lost.')).toHaveLength(1);
  });

  it('an abandoned due time older than ten minutes is recorded skipped, not started that late', async () => {
    const s = (await create({ cron: '0 0 1 1 *', prompt: 'Too late.' })).body;
    await db.query(
      `INSERT INTO schedule_runs (id, schedule_id, due_at, claimed_at)
       VALUES (gen_random_uuid(), $1, now() - interval '20 minutes', now() - interval '20 minutes')`,
      [s.id],
    );
    await eventually(async () => (await dueTimes(s.id))[0].status === 'skipped', 20_000);
    expect(await dueTimes(s.id)).toEqual([
      { runId: null, sessionId: null, status: 'skipped', dueAt: expect.any(String), startedAt: null },
    ]);
    expect(upstream.requests.filter((r) => promptOf(r) === 'Too late.')).toHaveLength(0);
  });

  it('a busy session: enqueue by default (the run waits for the active one), reject or a full queue skips the due time', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((done) => (release = done));
    let first = true;
    upstream.beforeAnswer = async () => {
      if (!first) return;
      first = false;
      await held;
    };
    upstream.enqueue(text('Busy.'), text('Queued one.'));
    const active = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Work.' }, headers: ALICE });
    const sessionId = active.headers.get('x-session-id')!;
    await upstream.waitForRequests(1);

    const queuing = (await create({ cron: '0 0 1 1 *', prompt: 'Queued.', sessionId })).body;
    const rejecting = (await create({ cron: '0 0 1 1 *', prompt: 'No.', sessionId, onActive: 'reject' }))
      .body;
    await makeDue(queuing.id);
    await eventually(async () => (await dueTimes(queuing.id)).some((d) => d.status === 'queued'), 20_000);
    // SESSION_MAX_QUEUE is 1 here: a second enqueue finds the queue full.
    const overflowing = (await create({ cron: '0 0 1 1 *', prompt: 'Too many.', sessionId })).body;
    await makeDue(rejecting.id);
    await makeDue(overflowing.id);
    for (const id of [rejecting.id, overflowing.id]) {
      await eventually(async () => (await dueTimes(id)).length === 1, 20_000);
      expect(await dueTimes(id)).toEqual([
        { runId: null, sessionId: null, status: 'skipped', dueAt: expect.any(String), startedAt: null },
      ]);
    }

    release();
    await active.rest();
    await eventually(async () => (await dueTimes(queuing.id))[0].status === 'completed', 20_000);
    // Three due times go through a ticker of 5 s: more than jest's default 30 s on a loaded machine.
  }, 90_000);
});
