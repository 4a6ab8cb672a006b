import type { Client } from 'pg';
import { RunStarts } from '../../src/runs/run-starts.service';
import { StartPlans } from '../../src/runs/start-plans.service';
import { RunStartStore } from '../../src/store/run-start-store.service';
import { RunStore } from '../../src/store/run-store.service';
import { SessionHasActiveRun } from '../../src/store/store-errors';
import { connect } from '../support/database';
import { startCore, type CoreApp } from '../support/core-app';

/**
 * Two starts on one session that both looked before either stored: the store refuses the second
 * run by the session's unique index, and says so as a typed error (no SQLSTATE leaves store/).
 */
describe('a second active run of a session, refused by the store', () => {
  let core: CoreApp;
  let db: Client;

  beforeAll(async () => {
    core = await startCore({ MAX_ACTIVE_RUNS_PER_KEY: '10', RATE_LIMIT_RUNS_PER_MINUTE: '1000' });
    db = await connect(core.databaseUrl);
  });
  afterAll(async () => {
    await db.end();
    await core.close();
  });

  it('throws SessionHasActiveRun for the start that lost, and stores nothing of it', async () => {
    const first = await core.module.get(RunStarts).open('ida', { prompt: 'one' }, 'test-process', 0);
    if (!('opened' in first)) throw new Error('expected a new run');
    const sessionId = first.opened.session.id;
    await db.query(`UPDATE runs SET status = 'completed' WHERE id = $1`, [first.opened.run.id]);

    // Both planned while the session is free: each passed the busy check.
    const plans = core.module.get(StartPlans);
    const a = await plans.plan('ida', { prompt: 'two', sessionId }, 'test-process');
    const b = await plans.plan('ida', { prompt: 'three', sessionId }, 'test-process');
    const store = core.module.get(RunStartStore);
    const q = core.module.get(RunStore).queryable;
    await store.start(q, a.start, 0);
    const lost = store.start(q, b.start, 0);
    await expect(lost).rejects.toBeInstanceOf(SessionHasActiveRun);
    await expect(lost).rejects.toMatchObject({ sessionId });
    const runs = await db.query(`SELECT id FROM runs WHERE session_id = $1 ORDER BY created_at`, [sessionId]);
    expect(runs.rows.map((r: { id: string }) => r.id)).toEqual([first.opened.run.id, a.start.run.id]);
  });
});
