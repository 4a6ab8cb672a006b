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
  afterAll(async () => {
    await admin.end();
    await store.close();
  });

  it('writes the writes, the run changes and the events in one statement, moving last_seq', async () => {
    const { runId, sessionId } = await insertRunningRun(store, 'me');
    const message = store.conversation.insertMessagesSql(sessionId, runId, [
      { seq: 3, role: 'assistant', content: 'hi' },
    ]);
    const events = serializeEvents(runId, 1, [{ type: 'text', delta: 'hi' }]);
    await store.runs.writeWithEvents(store.runs.queryable, runId, events, [message], { iterations: 1 }, 'me');
    const run = await store.runs.findRun(runId);
    expect(run).toMatchObject({ lastSeq: 2, iterations: 1, leaseOwner: 'me' });
    expect((await storedEvents(store, runId)).map((e) => e.seq)).toEqual([1, 2]);
    expect(await store.runs.writeState(runId)).toEqual({ lastSeq: 2, leaseOwner: 'me' });
  });

  it('refuses a guarded statement whole when the lease is someone else’s: no write, no event, no change', async () => {
    const { runId, sessionId } = await insertRunningRun(store, 'other');
    const message = store.conversation.insertMessagesSql(sessionId, runId, [
      { seq: 3, role: 'assistant', content: 'late' },
    ]);
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

  it('finds runs whose lease ran out, and not those still leased', async () => {
    const expired = await insertRunningRun(store, 'dead-process');
    const alive = await insertRunningRun(store, 'live-process');
    await admin.query(`UPDATE runs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [
      expired.runId,
    ]);
    const ids = await store.runs.abandonedRunIds(1000);
    expect(ids).toContain(expired.runId);
    expect(ids).not.toContain(alive.runId);
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
