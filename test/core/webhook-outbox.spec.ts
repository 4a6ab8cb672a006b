import { randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { serializeEvents } from '../../src/events/run-events';
import { LeaseLost } from '../../src/store/store-errors';
import { connect } from '../support/database';
import { insertRunningRun, openCoreStore, type CoreStore } from '../support/core-store';

// The outbox is part of the run's own statement: owed exactly when the state is stored, never otherwise.
describe('the webhook outbox in the run journal (real PostgreSQL)', () => {
  let store: CoreStore;
  let admin: Client;
  const hook = async (owner: string, events: string[]) => {
    const id = randomUUID();
    await admin.query(
      `INSERT INTO webhooks (id, owner, url, events, secret) VALUES ($1, $2, 'http://example.com/', $3, 's')`,
      [id, owner, events],
    );
    return id;
  };
  const owed = async (runId: string) =>
    (
      await admin.query(
        `SELECT webhook_id AS "webhookId", type, data FROM webhook_deliveries WHERE run_id = $1 ORDER BY webhook_id`,
        [runId],
      )
    ).rows;

  beforeAll(async () => {
    store = await openCoreStore();
    admin = await connect(store.url);
  });
  afterEach(() => admin.query('DELETE FROM webhooks'));
  afterAll(async () => {
    await admin.end();
    await store.close();
  });

  it("a run's end owes each of its key's webhooks that asked for it one event, with the run as the statement left it", async () => {
    const all = await hook('tester', ['*']);
    const completed = await hook('tester', ['run.completed', 'run.failed']);
    await hook('tester', ['run.failed']);
    await hook('someone-else', ['*']);
    const { runId, sessionId } = await insertRunningRun(store, 'me');

    // A step that changes no status owes nothing.
    await store.runs.writeWithEvents(store.runs.queryable, runId, [], [], { iterations: 1 }, 'me');
    expect(await owed(runId)).toEqual([]);

    const events = serializeEvents(runId, 1, [{ type: 'text', delta: 'x' }]);
    await store.runs.writeWithEvents(
      store.runs.queryable,
      runId,
      events,
      [],
      { status: 'max_iterations', promptTokens: 7, completionTokens: 3, costUsd: 0.5, finished: true },
      'me',
    );
    const data = {
      runId,
      sessionId,
      status: 'max_iterations',
      usage: {
        promptTokens: 7,
        completionTokens: 3,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        costUsd: 0.5,
      },
      error: null,
    };
    expect(await owed(runId)).toEqual(
      [
        { webhookId: all, type: 'run.completed', data },
        { webhookId: completed, type: 'run.completed', data },
      ].sort((a, b) => a.webhookId.localeCompare(b.webhookId)),
    );
  });

  it('a write refused for a lost lease owes nothing, nor a transaction that rolls back', async () => {
    await hook('tester', ['*']);
    const { runId } = await insertRunningRun(store, 'other');
    await expect(
      store.runs.writeWithEvents(
        store.runs.queryable,
        runId,
        [],
        [],
        { status: 'completed', finished: true },
        'me',
      ),
    ).rejects.toBeInstanceOf(LeaseLost);
    await expect(
      store.runs.transaction(async (tx) => {
        await store.runs.updateRun(tx, runId, {
          status: 'failed',
          error: { code: 'X', message: 'x', retryable: false },
        });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await owed(runId)).toEqual([]);

    await store.runs.transaction((tx) =>
      store.runs.updateRun(tx, runId, {
        status: 'failed',
        error: { code: 'X', message: 'x', retryable: false },
      }),
    );
    expect((await owed(runId)).map((r) => [r.type, r.data.status, r.data.error])).toEqual([
      ['run.failed', 'failed', { code: 'X', message: 'x', retryable: false }],
    ]);
  });
});
