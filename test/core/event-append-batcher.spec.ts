import { serializeEvents } from '../../src/events/run-events';
import { EventAppendBatcher } from '../../src/store/event-append-batcher';
import { RUN_EVENTS_CHANNEL, type Queryable } from '../../src/store/run-store.service';
import { LeaseLost } from '../../src/store/store-errors';
import { insertRunningRun, openCoreStore, storedEvents, type CoreStore } from '../support/core-store';

// Group commit of text flushes, on a real PostgreSQL; the statements sent are counted on the way.
describe('EventAppendBatcher', () => {
  let store: CoreStore;
  let statements: number;
  let alone: number;
  let batcher: EventAppendBatcher;

  beforeAll(async () => {
    store = await openCoreStore(undefined, 60_000);
  });
  afterAll(async () => {
    await store.close();
  });
  beforeEach(() => {
    statements = 0;
    alone = 0;
    const counting: Queryable = {
      query: (sql: string, params?: unknown[]) => {
        statements++;
        return store.db.manager.query(sql, params);
      },
    };
    batcher = new EventAppendBatcher(counting, RUN_EVENTS_CHANNEL, (runId, events, owner) => {
      alone++;
      return store.runs.writeWithEvents(counting, runId, events, [], {}, owner);
    });
  });

  const text = (runId: string, from: number, ...deltas: string[]) =>
    serializeEvents(
      runId,
      from - 1,
      deltas.map((delta) => ({ type: 'text' as const, delta })),
    );

  it('writes the flushes of many runs made together in one statement, each run only while it is leased to the sender', async () => {
    const mine = await Promise.all(Array.from({ length: 5 }, () => insertRunningRun(store, 'me')));
    const taken = await insertRunningRun(store, 'another-process');

    const results = await Promise.allSettled([
      ...mine.map((r) => batcher.append(r.runId, text(r.runId, 2, 'a', 'b'), 'me')),
      batcher.append(taken.runId, text(taken.runId, 2, 'lost'), 'me'),
    ]);

    expect(statements).toBe(1);
    expect(results.slice(0, 5).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(results[5]).toMatchObject({ status: 'rejected', reason: expect.any(LeaseLost) });
    for (const r of mine) {
      expect((await storedEvents(store, r.runId)).map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(await store.runs.writeState(r.runId)).toEqual({ lastSeq: 3, leaseOwner: 'me' });
    }
    expect((await storedEvents(store, taken.runId)).map((e) => e.seq)).toEqual([1]);
  });

  it('sends a flush alone at once, and the ones made while a write is in flight together after it', async () => {
    const runs = await Promise.all(Array.from({ length: 4 }, () => insertRunningRun(store, 'me')));
    const first = batcher.append(runs[0].runId, text(runs[0].runId, 2, 'x'), 'me');
    await new Promise((resolve) => setImmediate(resolve)); // the first write has left
    const later = runs.slice(1).map((r) => batcher.append(r.runId, text(r.runId, 2, 'y'), 'me'));
    await Promise.all([first, ...later]);
    expect(alone).toBe(1);
    expect(statements).toBe(2);
  });

  it('keeps one run’s failure its own: a batch that fails is written again run by run', async () => {
    const good = await insertRunningRun(store, 'me');
    const bad = await insertRunningRun(store, 'me');
    const results = await Promise.allSettled([
      batcher.append(good.runId, text(good.runId, 2, 'fine'), 'me'),
      // seq 1 is run_started's: a duplicate key fails the batch, then this run's write alone.
      batcher.append(bad.runId, text(bad.runId, 1, 'clash'), 'me'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect((await storedEvents(store, good.runId)).map((e) => e.seq)).toEqual([1, 2]);
    expect((await storedEvents(store, bad.runId)).map((e) => e.seq)).toEqual([1]);
  });
});
