import type { Client } from 'pg';
import { DomainError, ErrorCode } from '../../src/common/domain-error';
import { RunStarts, type OpenedRun } from '../../src/runs/run-starts.service';
import { ConversationStore } from '../../src/store/conversation-store.service';
import { connect } from '../support/database';
import { eventually } from '../support/eventually';
import { startCore, type CoreApp } from '../support/core-app';
import type { ModelScript } from '../support/scripted-model';

/** Starts as RunStarts writes them, on a real database; no run is driven (nothing takes these up). */
describe('a run start: one statement far from the limits, the key locked near them', () => {
  let core: CoreApp;
  let starts: RunStarts;
  let db: Client;

  beforeAll(async () => {
    core = await startCore({ MAX_ACTIVE_RUNS_PER_KEY: '3', RATE_LIMIT_RUNS_PER_MINUTE: '1000' });
    starts = core.module.get(RunStarts);
    db = await connect(core.databaseUrl);
  });
  afterAll(async () => {
    await db.end();
    await core.close();
  });

  const open = async (owner: string, input: Parameters<RunStarts['open']>[1]): Promise<OpenedRun> => {
    const started = await starts.open(owner, input, 'test-process', 0);
    if (!('opened' in started)) throw new Error('expected a new run');
    return started.opened;
  };
  const count = async (sql: string, owner: string) =>
    Number((await db.query(sql, [owner])).rows[0].n as string);

  it('hands the loop of a new session exactly the conversation the store holds, without reading it', async () => {
    const opened = await open('ann', { prompt: 'First line\nmore', session: { systemPrompt: 'Be brief.' } });
    const stored = await core.module.get(ConversationStore).sessionMessages(opened.session.id);
    expect(opened.conversation).toEqual(stored);
    expect(stored.map((m) => [m.seq, m.role, m.content])).toEqual([
      [1, 'system', 'Be brief.'],
      [2, 'user', 'First line\nmore'],
    ]);
    expect(opened).toMatchObject({ promptSeq: 2, nextMessageSeq: 3 });
    expect(opened.session).toMatchObject({
      title: 'First line',
      systemPrompt: 'Be brief.',
      nextMessageSeq: 3,
    });
  });

  it('reads the conversation of an existing session, up to the new prompt', async () => {
    const first = await open('ben', { prompt: 'one' });
    await db.query(`UPDATE runs SET status = 'completed' WHERE id = $1`, [first.run.id]);
    const second = await open('ben', { prompt: 'two', sessionId: first.session.id });
    expect(second.conversation.map((m) => m.content)).toEqual([first.conversation[0].content, 'one', 'two']);
    expect(second).toMatchObject({ promptSeq: 3, nextMessageSeq: 4 });
  });

  it('answers a busy session with 409 naming its run, and an unknown one with 404, storing nothing', async () => {
    const first = await open('cat', { prompt: 'busy' });
    await expect(open('cat', { prompt: 'again', sessionId: first.session.id })).rejects.toMatchObject({
      code: ErrorCode.SessionBusy,
      details: { runId: first.run.id },
    });
    await expect(
      open('cat', { prompt: 'x', sessionId: '00000000-0000-4000-8000-000000000000' }),
    ).rejects.toMatchObject({ code: ErrorCode.SessionNotFound });
    expect(await count(`SELECT count(*) AS n FROM runs WHERE owner = $1`, 'cat')).toBe(1);
  });

  it('lets concurrent starts near a limit pass it never: exactly the limit start, the rest get 429 and store nothing', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => open('dan', { prompt: `race ${i}` })),
    );
    const refused = results.filter((r) => r.status === 'rejected');
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    for (const r of refused) {
      expect(r.reason).toBeInstanceOf(DomainError);
      expect((r.reason as DomainError).code).toBe(ErrorCode.TooManyActiveRuns);
    }
    expect(await count(`SELECT count(*) AS n FROM runs WHERE owner = $1`, 'dan')).toBe(3);
    expect(await count(`SELECT count(*) AS n FROM sessions WHERE owner = $1`, 'dan')).toBe(3);
    expect(await count(`SELECT count(*) AS n FROM run_starts WHERE owner = $1`, 'dan')).toBe(3);
  });

  it('near a limit waits for the key’s lock, so it counts a start that has not committed yet', async () => {
    const runs = [await open('eve', { prompt: '1' }), await open('eve', { prompt: '2' })];
    await open('eve', { prompt: '3' });
    await db.query(`UPDATE runs SET status = 'completed' WHERE id = $1`, [runs[0].run.id]);
    // Another start of the key, between its count and its commit: it holds the lock, its run is not visible yet.
    await db.query('BEGIN');
    await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['eve']);
    await db.query(`UPDATE runs SET status = 'running' WHERE id = $1`, [runs[0].run.id]);
    let settled = false;
    const late = open('eve', { prompt: '4' }).finally(() => (settled = true));
    late.catch(() => undefined);
    // The positive signal that it had its chance: its statement waits for the key's lock this client
    // holds (in this database: other suites share the server).
    await eventually(
      async () =>
        Number(
          (
            await db.query(
              `SELECT count(*) AS n FROM pg_locks
                WHERE locktype = 'advisory' AND NOT granted AND pid <> pg_backend_pid()
                  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND objid::text::bigint = (hashtext($1)::bigint & 4294967295)`,
              ['eve'],
            )
          ).rows[0].n as string,
        ) === 1,
    );
    expect(settled).toBe(false);
    await db.query('COMMIT');
    await expect(late).rejects.toMatchObject({ code: ErrorCode.TooManyActiveRuns });
    expect(await count(`SELECT count(*) AS n FROM runs WHERE owner = $1`, 'eve')).toBe(3);
  });

  describe('its first model call, sent with the start', () => {
    beforeEach(() => core.model.reset());

    it('goes out before the start commits, once the key had room at its last start here', async () => {
      const first = await open('fay', { prompt: 'one' });
      expect(first.firstCall).toBeUndefined(); // nothing is known of the key yet
      // The start's statement waits for this lock; the model is asked all the same.
      await db.query('BEGIN');
      await db.query('LOCK TABLE run_starts IN EXCLUSIVE MODE');
      let called = false;
      void core.model.nextCall().then(() => (called = true));
      const pending = open('fay', { prompt: 'two', session: { systemPrompt: 'Be brief.' } });
      pending.catch(() => undefined);
      try {
        await eventually(() => called, 5_000);
        expect(await count(`SELECT count(*) AS n FROM runs WHERE owner = $1`, 'fay')).toBe(1);
      } finally {
        await db.query('COMMIT');
      }
      const second = await pending;
      second.firstCall?.controller.abort();
      expect(second.firstCall?.call.request.messages).toEqual([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'two' },
      ]);
      expect(core.model.requests).toHaveLength(1);
    });

    it('to an existing session, goes out with the conversation read beside the start; kept only when the store holds the same', async () => {
      const sent: { prompt: string; signal: AbortSignal }[] = [];
      const watch: ModelScript = (request, signal) => {
        sent.push({ prompt: request.messages[request.messages.length - 1].content ?? '', signal });
        return (async function* () {})();
      };
      core.model.enqueue(watch, watch, watch);
      const first = await open('hal', { prompt: 'one' });
      await db.query(`UPDATE runs SET status = 'completed' WHERE id = $1`, [first.run.id]);
      const second = await open('hal', { prompt: 'two', sessionId: first.session.id });
      expect(second.firstCall?.call.request.messages.map((m) => m.content)).toEqual(
        second.conversation.map((m) => m.content),
      );
      second.firstCall?.controller.abort();
      await db.query(`UPDATE runs SET status = 'completed' WHERE id = $1`, [second.run.id]);

      // A message lands after the conversation was read, before the start is stored.
      await db.query('BEGIN');
      await db.query('LOCK TABLE run_starts IN EXCLUSIVE MODE');
      const pending = open('hal', { prompt: 'three', sessionId: first.session.id });
      pending.catch(() => undefined);
      try {
        await eventually(() => sent.length === 2, 5_000);
        await db.query(
          `WITH pos AS (UPDATE sessions SET next_message_seq = next_message_seq + 1 WHERE id = $1
                         RETURNING next_message_seq - 1 AS seq)
           INSERT INTO messages (id, session_id, seq, role, content)
           SELECT gen_random_uuid(), $1, pos.seq, 'user', 'in between' FROM pos`,
          [first.session.id],
        );
      } finally {
        await db.query('COMMIT');
      }
      const third = await pending;
      expect(third.conversation.map((m) => m.content).slice(-2)).toEqual(['in between', 'three']);
      expect(third.firstCall).toBeUndefined(); // the run sends its own call, with the stored conversation
      expect(sent[1]).toMatchObject({ prompt: 'three' });
      expect(sent[1].signal.aborted).toBe(true);
    });

    it('is stopped when its start then stores nothing, and the key’s next start waits for its own statement', async () => {
      const sent: { prompt: string; signal: AbortSignal }[] = [];
      const watch: ModelScript = (request, signal) => {
        sent.push({ prompt: request.messages[request.messages.length - 1].content ?? '', signal });
        return (async function* () {})();
      };
      core.model.enqueue(watch, watch, watch, watch);
      await open('gil', { prompt: 'first' });
      expect(sent).toHaveLength(0);
      // Room for two more under MAX_ACTIVE_RUNS_PER_KEY=3, and three starts at once: one is refused.
      const prompts = ['a', 'b', 'c'];
      const results = await Promise.allSettled(prompts.map((prompt) => open('gil', { prompt })));
      const refused = prompts.filter((_, i) => results[i].status === 'rejected');
      expect(refused).toHaveLength(1);
      expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({
        code: ErrorCode.TooManyActiveRuns,
      });
      expect(sent.map((c) => c.prompt).sort()).toEqual(prompts);
      for (const c of sent) expect(c.signal.aborted).toBe(refused.includes(c.prompt));
      for (const r of results) if (r.status === 'fulfilled') r.value.firstCall?.controller.abort();
      await expect(open('gil', { prompt: 'd' })).rejects.toMatchObject({ code: ErrorCode.TooManyActiveRuns });
      expect(sent).toHaveLength(3);
    });
  });
});
