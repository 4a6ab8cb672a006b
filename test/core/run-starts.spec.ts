import type { Client } from 'pg';
import { DomainError, ErrorCode } from '../../src/common/domain-error';
import { RunStarts, type OpenedRun } from '../../src/runs/run-starts.service';
import { ConversationStore } from '../../src/store/conversation-store.service';
import { connect } from '../support/database';
import { startCore, type CoreApp } from '../support/core-app';

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
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(settled).toBe(false);
    await db.query('COMMIT');
    await expect(late).rejects.toMatchObject({ code: ErrorCode.TooManyActiveRuns });
    expect(await count(`SELECT count(*) AS n FROM runs WHERE owner = $1`, 'eve')).toBe(3);
  });
});
