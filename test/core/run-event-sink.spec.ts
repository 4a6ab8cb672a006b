import { RunEventHub } from '../../src/events/run-event-hub.service';
import { SINK_WINDOW_EVENTS as SINK_WINDOW } from '../../src/common/tuning';
import { RunEventSink } from '../../src/events/run-event-sink';
import { RunLease } from '../../src/events/run-lease';
import type { RunEventBody, SerializedEvent } from '../../src/events/run-events';
import type { PgNotifications } from '../../src/persistence/pg-notifications.service';
import { RunJournal } from '../../src/store/run-journal.service';
import type { RunWrite } from '../../src/store/run-store.service';
import { LeaseLost, StoreUnavailable } from '../../src/store/store-errors';
import { connect } from '../support/database';
import { eventually } from '../support/eventually';
import { insertRunningRun, openCoreStore, storedEvents, type CoreStore } from '../support/core-store';
import type { Client } from 'pg';

const ME = 'process-me';
const step: RunEventBody = {
  type: 'step_finished',
  iteration: 1,
  finishReason: 'stop',
  usage: { promptTokens: 1, completionTokens: 1, costUsd: null },
};
/** The sink's ordered, leased write of `bodies` with `writes` (as RunJournal's verbs write). */
const commitWrites = (sink: RunEventSink, bodies: RunEventBody[], writes: RunWrite[]) =>
  sink.record(bodies, (at) =>
    store.runs.writeWithEvents(store.runs.queryable, at.runId, at.events, writes, {}, at.leaseOwner),
  );
let store: CoreStore;
const parsed = (events: { seq: number; type: string; data: string }[]) =>
  events.map((e) => ({ seq: e.seq, type: e.type, body: JSON.parse(e.data) as unknown }));

describe('RunEventSink on a real PostgreSQL: events are shown only once stored', () => {
  let admin: Client;

  beforeAll(async () => {
    store = await openCoreStore();
    admin = await connect(store.url);
    // Fault injection: the log refuses an event whose payload says "poison" (a write the database
    // rejects for good), and answers "cannot connect now" (57P03, the database being unreachable)
    // while the flag table holds the run's id.
    await admin.query(`
      CREATE TABLE unreachable_for (run_id uuid PRIMARY KEY);
      CREATE SEQUENCE unreachable_hits; -- counts refused tries (a sequence is not rolled back)
      CREATE FUNCTION test_faults() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.payload::text LIKE '%poison%' THEN RAISE EXCEPTION 'refused by the test trigger'; END IF;
        IF EXISTS (SELECT 1 FROM unreachable_for WHERE run_id = NEW.run_id) THEN
          PERFORM nextval('unreachable_hits');
          RAISE EXCEPTION 'the database system is starting up' USING ERRCODE = '57P03';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_faults BEFORE INSERT ON run_events FOR EACH ROW EXECUTE FUNCTION test_faults();`);
  });
  afterAll(async () => {
    await admin.end();
    await store.close();
  });

  async function newSink(leaseMs = 30_000) {
    const run = await insertRunningRun(store, ME);
    const errors: unknown[] = [];
    const sink = new RunEventSink(
      run.runId,
      0,
      store.runs,
      new RunLease(ME, leaseMs),
      (err) => errors.push(err),
      [run.firstEvent],
    );
    return { ...run, sink, errors };
  }

  it('shows a commit and the text before it only after the statement has committed', async () => {
    const { runId, sink } = await newSink();
    await admin.query('BEGIN');
    await admin.query('SELECT 1 FROM runs WHERE id = $1 FOR UPDATE', [runId]);
    sink.emit({ type: 'text', delta: 'Hel' });
    const committed = commitWrites(sink, [step], []);
    // The statement is written and waiting on the row lock: nothing of it may be visible yet. (Asked
    // of the locks, not of pg_stat_activity.query, which may still show the connection's last text.)
    const adminPid = (await admin.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
    await eventually(async () => {
      const rows = await admin.query(
        `SELECT 1 FROM pg_stat_activity WHERE $1::int = ANY (pg_blocking_pids(pid))`,
        [adminPid],
      );
      return rows.rowCount! > 0;
    });
    expect(sink.visibleAfter(1)).toEqual([]);
    expect(sink.visibleSeq).toBe(1);
    await admin.query('COMMIT');
    await committed;
    expect(sink.visibleAfter(1)!.map((e) => e.type)).toEqual(['text', 'step_finished']);
    expect(parsed(await storedEvents(store, runId))).toEqual(parsed(sink.visibleAfter(0)!));
  });

  it('writes the text emitted between two writes as one text event, in order with the events around it', async () => {
    const { runId, sink } = await newSink();
    sink.emit({ type: 'text', delta: 'Hel' });
    sink.emit({ type: 'text', delta: 'lo, ' });
    sink.emit({ type: 'tool_call_output', toolCallId: 'c1', stream: 'stdout', chunk: 'out' });
    sink.emit({ type: 'text', delta: 'wor' });
    sink.emit({ type: 'text', delta: 'ld' });
    await commitWrites(sink, [step], []);
    sink.emit({ type: 'text', delta: '!' });
    await sink.flush();
    const stored = parsed(await storedEvents(store, runId));
    const piece = (body: unknown) => {
      const b = body as { delta?: string; chunk?: string };
      return b.delta ?? b.chunk ?? null;
    };
    expect(stored.map((e) => [e.seq, e.type, piece(e.body)])).toEqual([
      [1, 'run_started', null],
      [2, 'text', 'Hello, '],
      [3, 'tool_call_output', 'out'],
      [4, 'text', 'world'],
      [5, 'step_finished', null],
      [6, 'text', '!'],
    ]);
    expect(stored).toEqual(parsed(sink.visibleAfter(0)!));
  });

  it('never shows a write the database refused, and gives its unshown numbers to the next events', async () => {
    const { runId, sink, errors } = await newSink();
    sink.emit({ type: 'text', delta: 'fine' });
    await sink.flush();
    sink.emit({ type: 'text', delta: 'poison' });
    await sink.flush();
    expect(errors).toHaveLength(1);
    expect(sink.visibleSeq).toBe(2);
    await commitWrites(sink, [{ type: 'error', code: 'INTERNAL_ERROR', message: 'x', retryable: false }], []);
    const stored = parsed(await storedEvents(store, runId));
    expect(stored.map((e) => [e.seq, e.type])).toEqual([
      [1, 'run_started'],
      [2, 'text'],
      [3, 'error'],
    ]);
    expect(stored).toEqual(parsed(sink.visibleAfter(0)!));
  });

  it('fails the writes queued behind a refused one (they built on its events) and goes on after them', async () => {
    const { runId, sink } = await newSink();
    const refused = commitWrites(sink, [{ type: 'text', delta: 'poison' }], []);
    const behind = commitWrites(sink, [step], []);
    await expect(refused).rejects.toThrow('refused by the test trigger');
    await expect(behind).rejects.toThrow('refused by the test trigger');
    await commitWrites(sink, [step], []);
    const stored = parsed(await storedEvents(store, runId));
    expect(stored.map((e) => [e.seq, e.type])).toEqual([
      [1, 'run_started'],
      [2, 'step_finished'],
    ]);
    expect(stored).toEqual(parsed(sink.visibleAfter(0)!));
  });

  it('retries a write while the database is unreachable and the lease lasts, and shows it once stored', async () => {
    const { runId, sink, errors } = await newSink();
    const hits = async () =>
      Number(
        (
          await admin.query(
            `SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS n FROM unreachable_hits`,
          )
        ).rows[0].n,
      );
    const before = await hits();
    await admin.query('INSERT INTO unreachable_for VALUES ($1)', [runId]);
    sink.emit({ type: 'text', delta: 'kept' });
    const committed = commitWrites(sink, [step], []);
    // Refused three times: retried, and never shown meanwhile.
    await eventually(async () => (await hits()) - before >= 3);
    expect(sink.visibleSeq).toBe(1);
    await admin.query('DELETE FROM unreachable_for WHERE run_id = $1', [runId]);
    await committed;
    expect(errors).toEqual([]);
    const stored = parsed(await storedEvents(store, runId));
    expect(stored.map((e) => e.type)).toEqual(['run_started', 'text', 'step_finished']);
    expect(stored).toEqual(parsed(sink.visibleAfter(0)!));
  });

  it('lets the run go when the database stays unreachable past the lease: nothing more is written or shown', async () => {
    const { runId, sink, errors } = await newSink(1);
    await admin.query('INSERT INTO unreachable_for VALUES ($1)', [runId]);
    sink.emit({ type: 'text', delta: 'lost' });
    await expect(commitWrites(sink, [step], [])).rejects.toBeInstanceOf(StoreUnavailable);
    expect(errors[0]).toBeInstanceOf(StoreUnavailable);
    expect(sink.released).toBeInstanceOf(StoreUnavailable);
    expect(sink.closed).toBe(true);
    await admin.query('DELETE FROM unreachable_for WHERE run_id = $1', [runId]);
    await expect(commitWrites(sink, [step], [])).rejects.toBeInstanceOf(StoreUnavailable);
    expect((await storedEvents(store, runId)).map((e) => e.type)).toEqual(['run_started']);
    expect(sink.visibleAfter(0)!.map((e) => e.type)).toEqual(['run_started']);
  });

  it('writes nothing into a run another process has taken (one statement, rolled back whole)', async () => {
    const { runId, sessionId, sink, errors } = await newSink();
    await admin.query(`UPDATE runs SET lease_owner = 'someone-else' WHERE id = $1`, [runId]);
    const message: RunWrite = {
      kind: 'messages',
      sessionId,
      runId,
      messages: [{ seq: 99, role: 'assistant', content: 'should not land' }],
    };
    await expect(commitWrites(sink, [step], [message])).rejects.toBeInstanceOf(LeaseLost);
    expect(errors[0]).toBeInstanceOf(LeaseLost);
    expect(sink.released).toBeInstanceOf(LeaseLost);
    const messages = await admin.query('SELECT 1 FROM messages WHERE run_id = $1 AND seq = 99', [runId]);
    expect(messages.rowCount).toBe(0);
    expect((await storedEvents(store, runId)).map((e) => e.type)).toEqual(['run_started']);
  });

  it('writes nothing through a transaction either once the lease is gone', async () => {
    const { runId, sessionId, sink } = await newSink();
    await admin.query(`UPDATE runs SET lease_owner = NULL, status = 'failed' WHERE id = $1`, [runId]);
    await expect(
      sink.record([step], (at) =>
        new RunJournal(store.runs, store.conversation).finish(at, {
          sessionId,
          settled: [],
          partial: null,
          spent: null,
          run: { status: 'completed' },
        }),
      ),
    ).rejects.toBeInstanceOf(LeaseLost);
    const run = await store.runs.findRun(runId);
    expect(run?.status).toBe('failed');
    expect(run?.lastSeq).toBe(1);
  });

  it('keeps only a window of a long run in memory; a follower from the start reads the rest from the log', async () => {
    const { runId, sink } = await newSink();
    const hub = new RunEventHub(store.runs, {
      listen: async () => () => undefined,
    } as unknown as PgNotifications);
    hub.attach(sink);
    const total = SINK_WINDOW * 8;
    // Tool output, which (unlike text) stays one event per emit.
    for (let i = 0; i < total; i++) {
      sink.emit({ type: 'tool_call_output', toolCallId: 'call_1', stream: 'stdout', chunk: `${i} ` });
      if (i % 100 === 99) await sink.flush();
    }
    await commitWrites(
      sink,
      [
        {
          type: 'done',
          sessionId: 's',
          status: 'completed',
          iterations: 1,
          usage: { promptTokens: 1, completionTokens: 1, costUsd: null },
          messageId: null,
        },
      ],
      [],
    );
    expect(sink.heldEvents).toBeLessThanOrEqual(2 * SINK_WINDOW);
    expect(sink.visibleAfter(0)).toBeNull(); // the start is no longer in memory

    const seen: SerializedEvent[] = [];
    for await (const batch of hub.follow(runId, 0, new AbortController().signal)) {
      seen.push(...(batch as SerializedEvent[]));
    }
    expect(seen.map((e) => e.seq)).toEqual(Array.from({ length: total + 2 }, (_, i) => i + 1));
    expect(parsed(seen)).toEqual(parsed(await storedEvents(store, runId)));
  });
});
