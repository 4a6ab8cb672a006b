import type { RunWrite } from '../../src/store/run-store.service';
import { LeaseLost } from '../../src/store/store-errors';
import { serializeEvents } from '../../src/events/run-events';
import { connect } from '../support/database';
import { insertRunningRun, openCoreStore, storedEvents, type CoreStore } from '../support/core-store';
import type { Client } from 'pg';

// The run store's SQL on a real, migrated PostgreSQL (each statement as the core runs it).
describe('RunStore on a real PostgreSQL', () => {
  let store: CoreStore;
  let admin: Client;

  beforeAll(async () => {
    store = await openCoreStore(undefined, 60_000);
    admin = await connect(store.url);
  });
  const endRuns = (ids: string[]) =>
    admin.query(`UPDATE runs SET status = 'failed', lease_owner = NULL WHERE id = ANY($1)`, [ids]);

  afterAll(async () => {
    await admin.end();
    await store.close();
  });

  it('writes the writes, the run changes and the events in one statement, moving last_seq', async () => {
    const { runId, sessionId } = await insertRunningRun(store, 'me');
    const message: RunWrite = {
      kind: 'messages',
      sessionId,
      runId,
      messages: [{ seq: 3, role: 'assistant', content: 'hi' }],
    };
    const events = serializeEvents(runId, 1, [{ type: 'text', delta: 'hi' }]);
    await store.runs.writeWithEvents(store.runs.queryable, runId, events, [message], { iterations: 1 }, 'me');
    const run = await store.runs.findRun(runId);
    expect(run).toMatchObject({ lastSeq: 2, iterations: 1, leaseOwner: 'me' });
    expect((await storedEvents(store, runId)).map((e) => e.seq)).toEqual([1, 2]);
    expect(await store.runs.writeState(runId)).toEqual({ lastSeq: 2, leaseOwner: 'me' });
  });

  it('a write that ends the run says whether a prompt waits in its session; one that does not end it, nothing', async () => {
    const write = (runId: string, seq: number, fields: { finished?: boolean }) =>
      store.runs.writeWithEvents(
        store.runs.queryable,
        runId,
        serializeEvents(runId, seq, [{ type: 'text', delta: '.' }]),
        [],
        { iterations: 1, ...(fields.finished ? { status: 'completed' as const, finished: true } : {}) },
        'me',
      );
    const quiet = await insertRunningRun(store, 'me');
    expect(await write(quiet.runId, 2, {})).toEqual({ queuedInSession: null });
    expect(await write(quiet.runId, 3, { finished: true })).toEqual({ queuedInSession: false });

    const busy = await insertRunningRun(store, 'me');
    // A prompt queued behind the run: a second run of the session, waiting.
    await admin.query(
      `INSERT INTO runs (id, session_id, owner, status, model, max_iterations)
       SELECT gen_random_uuid(), session_id, owner, 'queued', model, max_iterations FROM runs WHERE id = $1`,
      [busy.runId],
    );
    expect(await write(busy.runId, 2, { finished: true })).toEqual({ queuedInSession: true });
  });

  it('refuses a guarded statement whole when the lease is someone else’s: no write, no event, no change', async () => {
    const { runId, sessionId } = await insertRunningRun(store, 'other');
    const message: RunWrite = {
      kind: 'messages',
      sessionId,
      runId,
      messages: [{ seq: 3, role: 'assistant', content: 'late' }],
    };
    const events = serializeEvents(runId, 1, [{ type: 'text', delta: 'late' }]);
    await expect(
      store.runs.writeWithEvents(store.runs.queryable, runId, events, [message], { iterations: 9 }, 'me'),
    ).rejects.toBeInstanceOf(LeaseLost);
    expect(await store.runs.findRun(runId)).toMatchObject({ lastSeq: 1, iterations: 0 });
    const rows = await admin.query(`SELECT 1 FROM messages WHERE run_id = $1 AND role = 'assistant'`, [
      runId,
    ]);
    expect(rows.rowCount).toBe(0);
    // Unguarded (a process holding the row lock, e.g. ending a detached run), the same statement lands.
    await store.runs.writeWithEvents(store.runs.queryable, runId, events, [message], { iterations: 9 });
    expect(await store.runs.findRun(runId)).toMatchObject({ lastSeq: 2, iterations: 9 });
  });

  it('checks the lease inside a transaction under the row lock', async () => {
    const { runId } = await insertRunningRun(store, 'me');
    await store.runs.transaction((tx) => store.runs.assertLeased(tx, runId, 'me'));
    await expect(
      store.runs.transaction((tx) => store.runs.assertLeased(tx, runId, 'you')),
    ).rejects.toBeInstanceOf(LeaseLost);
  });

  it('renews only this process’s running runs, and says which and which were asked to cancel', async () => {
    const mine = await insertRunningRun(store, 'renewer');
    const cancelled = await insertRunningRun(store, 'renewer');
    const taken = await insertRunningRun(store, 'someone-else');
    await store.runs.requestCancel(cancelled.runId);
    const result = await store.runs.renewLeases('renewer', [mine.runId, cancelled.runId, taken.runId]);
    expect(result.renewed.sort()).toEqual([mine.runId, cancelled.runId].sort());
    expect(result.cancelled).toEqual([cancelled.runId]);
  });

  it('claims every run whose lease ran out exactly once among racing processes, counting the take-over of a lost one', async () => {
    const lost = await Promise.all(Array.from({ length: 6 }, () => insertRunningRun(store, 'dead-process')));
    const handedOver = await insertRunningRun(store, 'stopping-process');
    const alive = await insertRunningRun(store, 'live-process');
    await admin.query(`UPDATE runs SET lease_expires_at = now() - interval '1 second' WHERE id = ANY($1)`, [
      lost.map((r) => r.runId),
    ]);
    expect(await store.runs.releaseLeases('stopping-process', [handedOver.runId])).toEqual([
      handedOver.runId,
    ]);

    const claims = await Promise.all(
      Array.from({ length: 4 }, (_, i) => store.runs.claimExpiredRuns(`replica-${i}`, 3)),
    );
    const mine = new Set([...lost.map((r) => r.runId), handedOver.runId]);
    const claimed = claims.flat().filter((c) => mine.has(c.id) || c.id === alive.runId);
    expect(claimed.map((c) => c.id).sort()).toEqual([...mine].sort());
    expect(claimed.find((c) => c.id === handedOver.runId)!.reason).toBe('shutdown');
    expect(claimed.filter((c) => c.reason === 'process_lost')).toHaveLength(lost.length);
    const rows = await admin.query(
      `SELECT id, resumes, lease_owner, lease_expires_at > now() AS leased FROM runs WHERE id = ANY($1)`,
      [[...mine]],
    );
    for (const row of rows.rows) {
      // A loss counts against RUN_MAX_RESUMES; a hand-over at shutdown does not.
      expect(row).toMatchObject({ resumes: row.id === handedOver.runId ? 0 : 1, leased: true });
      const winner = claims.findIndex((c) => c.some((x) => x.id === row.id));
      expect(row.lease_owner).toBe(`replica-${winner}`);
    }
    expect(await store.runs.claimExpiredRuns('late-replica', 3)).not.toContainEqual(
      expect.objectContaining({ id: lost[0].runId }),
    );
    await endRuns([...mine, alive.runId]); // the key's active runs are limited
  });

  it('does not claim a run lost RUN_MAX_RESUMES times or asked to cancel: those are to be ended', async () => {
    const exhausted = await insertRunningRun(store, 'dead-process');
    const cancelled = await insertRunningRun(store, 'dead-process');
    await admin.query(`UPDATE runs SET resumes = 3 WHERE id = $1`, [exhausted.runId]);
    await store.runs.requestCancel(cancelled.runId);
    await admin.query(`UPDATE runs SET lease_expires_at = now() - interval '1 second' WHERE id = ANY($1)`, [
      [exhausted.runId, cancelled.runId],
    ]);
    const ids = [exhausted.runId, cancelled.runId];
    const claimed = await store.runs.claimExpiredRuns('replica', 3);
    expect(claimed.filter((c) => ids.includes(c.id))).toEqual([]);
    const endable = (await store.runs.endableRuns(3, 1000)).filter((r) => ids.includes(r.id));
    expect(endable).toEqual(
      expect.arrayContaining([
        { id: exhausted.runId, cancelRequested: false },
        { id: cancelled.runId, cancelRequested: true },
      ]),
    );
    await endRuns(ids);
  });

  it('takes over a run handed over at shutdown however often it was lost before: no run fails because its process shut down', async () => {
    const run = await insertRunningRun(store, 'stopping-process');
    await admin.query(`UPDATE runs SET resumes = 3 WHERE id = $1`, [run.runId]);
    await store.runs.releaseLeases('stopping-process', [run.runId]);
    expect((await store.runs.endableRuns(3, 1000)).map((r) => r.id)).not.toContain(run.runId);
    const claimed = (await store.runs.claimExpiredRuns('replica', 3)).filter((c) => c.id === run.runId);
    expect(claimed).toEqual([{ id: run.runId, reason: 'shutdown' }]);
    const row = await admin.query(`SELECT resumes, lease_owner FROM runs WHERE id = $1`, [run.runId]);
    expect(row.rows[0]).toEqual({ resumes: 3, lease_owner: 'replica' });
    await endRuns([run.runId]);
  });

  it('reads back the text streamed after the last finished step (a dead run’s partial answer)', async () => {
    const { runId } = await insertRunningRun(store, 'me');
    const events = serializeEvents(runId, 1, [
      { type: 'text', delta: 'old ' },
      {
        type: 'step_finished',
        iteration: 1,
        finishReason: 'stop',
        usage: { promptTokens: 1, completionTokens: 1, costUsd: null },
      },
      { type: 'text', delta: 'new ' },
      { type: 'text', delta: 'text' },
    ]);
    await store.runs.appendEvents(store.runs.queryable, runId, events, 'me');
    expect(await store.runs.unfinishedText(store.runs.queryable, runId)).toBe('new text');
  });
});
