import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from 'pg';
import { ModelError } from '../../src/llm/model-provider';
import { ToolRunner } from '../../src/tools/tool-runner.service';
import { DrivenRuns } from '../../src/runs/driven-runs.service';
import type { SerializedEvent } from '../../src/events/run-events';
import { connect } from '../support/database';
import { eventually } from '../support/eventually';
import { startCore, type CoreApp } from '../support/core-app';
import { answer, calls, fail, gate, streamedCalls, textUntil } from '../support/scripted-model';

const OWNER = 'tester';
/** The advisory lock a write saying "held-" waits for. */
const HELD_LOCK = 4242;
/** The events' types, each run of consecutive `text` events as one (text between two writes is one event). */
const types = (events: SerializedEvent[]) =>
  events.map((e) => e.type).filter((type, i, all) => type !== 'text' || all[i - 1] !== 'text');
const body = (e: SerializedEvent) => JSON.parse(e.data) as Record<string, unknown>;
/** A run of one tool step and a text answer, as its stream says it. */
const TOOL_STEP_THEN_ANSWER = [
  'run_started',
  'tool_call_start',
  'step_finished',
  'tool_call_result',
  'text',
  'step_finished',
  'done',
];

describe('the orchestrator driven by a scripted ModelProvider, through every outcome', () => {
  let core: CoreApp;
  let db: Client;

  beforeAll(async () => {
    core = await startCore();
    db = await connect(core.databaseUrl);
    // A write the database refuses: any event whose payload says "poison" — after a while when it
    // says "slow-poison", so that whatever does not wait for the write has run by then. One that
    // says "slow-" is written after a while; one that says "held-", once the test lets it.
    await db.query(`
      CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.payload::text LIKE '%slow-%' THEN PERFORM pg_sleep(0.3); END IF;
        IF NEW.payload::text LIKE '%held-%' THEN PERFORM pg_advisory_xact_lock(${HELD_LOCK}); END IF;
        IF NEW.payload::text LIKE '%poison%' THEN RAISE EXCEPTION 'refused by the test trigger'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_poison BEFORE INSERT ON run_events FOR EACH ROW EXECUTE FUNCTION refuse_poison();`);
  });
  afterAll(async () => {
    await db.end();
    await core.close();
  });
  beforeEach(() => core.model.reset());

  async function stored(runId: string) {
    const run = await db.query(
      `SELECT status, error, iterations, lease_owner AS "leaseOwner", final_message_id AS "finalMessageId"
         FROM runs WHERE id = $1`,
      [runId],
    );
    const events = await db.query(
      `SELECT seq, type, payload FROM run_events WHERE run_id = $1 ORDER BY seq`,
      [runId],
    );
    const messages = await db.query(`SELECT role, content FROM messages WHERE run_id = $1 ORDER BY seq`, [
      runId,
    ]);
    return {
      run: run.rows[0] as {
        status: string;
        error: { code: string } | null;
        iterations: number;
        leaseOwner: string | null;
        finalMessageId: string | null;
      },
      events: events.rows.map((r: { seq: number; type: string; payload: unknown }) => ({
        seq: r.seq,
        type: r.type,
        body: r.payload,
      })),
      messages: messages.rows as { role: string; content: string | null }[],
    };
  }
  /** The stream said exactly what the store holds, in order. */
  const asStored = (events: SerializedEvent[]) =>
    events.map((e) => ({ seq: e.seq, type: e.type, body: body(e) }));

  it('completed: a text answer ends the run; the stream equals the stored log', async () => {
    core.model.enqueue(answer('Hel', 'lo'));
    const { runId } = await core.runs.start(OWNER, { prompt: 'hi' });
    const seen = await core.follow(runId);
    expect(types(seen)).toEqual(['run_started', 'text', 'step_finished', 'done']);
    const s = await stored(runId);
    expect(s.run).toMatchObject({ status: 'completed', iterations: 1, leaseOwner: null });
    expect(s.events).toEqual(asStored(seen));
    expect(s.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello' },
    ]);
  });

  it('a new run’s first model call leaves while its start is stored; the run reads that call, not a new one', async () => {
    // A start of the key here with room to spare, so the next one sends its first call ahead.
    core.model.enqueue(answer('warm'));
    await core.follow((await core.runs.start(OWNER, { prompt: 'warm up' })).runId);
    core.model.reset();
    core.model.enqueue(answer('Ear', 'ly'));
    // The start's statement waits for this lock; the model is asked meanwhile.
    await db.query('BEGIN');
    await db.query('LOCK TABLE run_starts IN EXCLUSIVE MODE');
    let called = false;
    void core.model.nextCall().then(() => (called = true));
    const started = core.runs.start(OWNER, { prompt: 'early' });
    started.catch(() => undefined);
    try {
      await eventually(() => called, 5_000);
    } finally {
      await db.query('COMMIT');
    }
    const { runId } = await started;
    const seen = await core.follow(runId);
    expect(types(seen)).toEqual(['run_started', 'text', 'step_finished', 'done']);
    expect(core.model.requests).toHaveLength(1);
    const s = await stored(runId);
    expect(s.events).toEqual(asStored(seen));
    expect(s.messages.at(-1)).toEqual({ role: 'assistant', content: 'Early' });
  });

  it('continues through a tool step: model → store → the step’s calls → model again', async () => {
    core.model.enqueue(calls({ name: 'read_file', arguments: { path: 'missing.txt' } }), answer('No file.'));
    const { runId } = await core.runs.start(OWNER, { prompt: 'read it' });
    const seen = await core.follow(runId);
    expect(types(seen)).toEqual(TOOL_STEP_THEN_ANSWER);
    const s = await stored(runId);
    expect(s.run).toMatchObject({ status: 'completed', iterations: 2 });
    expect(s.events).toEqual(asStored(seen));
    expect(s.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    // The second model call saw the tool's result.
    expect(core.model.requests[1].messages.at(-1)).toMatchObject({ role: 'tool' });
  });

  it('max_iterations: the last allowed call’s tool calls are refused (none starts early) and the run ends', async () => {
    const run = jest.spyOn(core.module.get(ToolRunner), 'run');
    core.model.enqueue(streamedCalls([{ name: 'read_file', arguments: { path: 'a.txt' } }]));
    const { runId } = await core.runs.start(OWNER, { prompt: 'go', session: { maxIterations: 1 } });
    let seen: SerializedEvent[];
    try {
      seen = await core.follow(runId);
      expect(run).not.toHaveBeenCalled();
    } finally {
      run.mockRestore();
    }
    expect(types(seen)).toEqual([
      'run_started',
      'tool_call_start',
      'tool_call_result',
      'step_finished',
      'done',
    ]);
    expect(body(seen[2])).toMatchObject({ errorCode: 'MAX_ITERATIONS', isError: true });
    expect(body(seen[4])).toMatchObject({ status: 'max_iterations', iterations: 1 });
    expect((await stored(runId)).run.status).toBe('max_iterations');
    expect(core.model.requests[0].toolChoice).toBe('none');
  });

  it('requires_action: a client call makes the run wait, stored before the stream says so', async () => {
    core.model.enqueue(calls({ name: 'ask_user', arguments: { question: 'ok?' } }));
    const { runId } = await core.runs.start(OWNER, {
      prompt: 'ask',
      session: {
        clientTools: [
          {
            type: 'function',
            function: {
              name: 'ask_user',
              parameters: { type: 'object', properties: { question: { type: 'string' } } },
            },
          },
        ],
      },
    });
    const seen = await core.follow(runId, (e) => e.type === 'step_finished');
    expect(types(seen)).toEqual(['run_started', 'tool_call_start', 'step_finished']);
    expect(body(seen[1])).toMatchObject({ executor: 'client', name: 'ask_user' });
    const s = await stored(runId);
    expect(s.run).toMatchObject({ status: 'requires_action', leaseOwner: null });
    await core.runs.cancel(OWNER, runId);
  });

  it('cancelled: a cancel mid-answer ends the run with done, keeping the streamed text', async () => {
    const held = gate();
    core.model.enqueue(textUntil(held.opened, ['Partial ', 'answer']));
    const { runId } = await core.runs.start(OWNER, { prompt: 'long' });
    let streamed = '';
    const first = await core.follow(
      runId,
      (e) => e.type === 'text' && (streamed += String(body(e).delta)).endsWith('answer'),
    );
    await core.runs.cancel(OWNER, runId);
    const seen = await core.follow(runId);
    expect(types(seen).slice(first.length)).toEqual(['done']);
    expect(body(seen.at(-1)!)).toMatchObject({ status: 'cancelled' });
    const s = await stored(runId);
    expect(s.run.status).toBe('cancelled');
    expect(s.events).toEqual(asStored(seen));
    expect(s.messages.at(-1)).toEqual({ role: 'assistant', content: 'Partial answer' });
  });

  it('failed: a model error ends the run with error, keeping the streamed text', async () => {
    core.model.enqueue(fail(new ModelError('UPSTREAM_UNAVAILABLE', 'upstream 503', true), 'So far'));
    const { runId } = await core.runs.start(OWNER, { prompt: 'x' });
    const seen = await core.follow(runId);
    expect(types(seen)).toEqual(['run_started', 'text', 'error']);
    expect(body(seen[2])).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
    const s = await stored(runId);
    expect(s.run).toMatchObject({ status: 'failed', error: { code: 'UPSTREAM_UNAVAILABLE' } });
    expect(s.events).toEqual(asStored(seen));
    expect(s.messages.at(-1)).toEqual({ role: 'assistant', content: 'So far' });
  });

  it('a write the store refuses mid-stream fails the run: nothing unstored is ever streamed, no number is reused', async () => {
    const held = gate();
    core.model.enqueue(textUntil(held.opened, ['good '], ['poison', ' more']));
    const { runId } = await core.runs.start(OWNER, { prompt: 'x' });
    await core.follow(runId, (e) => e.type === 'text');
    const following = core.follow(runId);
    held.open();
    const seen = await following;
    expect(types(seen)).toEqual(['run_started', 'text', 'error']);
    expect(body(seen[2])).toMatchObject({ code: 'INTERNAL_ERROR' });
    const s = await stored(runId);
    expect(s.run.status).toBe('failed');
    // The stream never said more than the store holds, and every number names one event.
    expect(s.events).toEqual(asStored(seen));
  });

  it('lost its lease mid-stream (another process took the run): lets it go, writes nothing, no final event', async () => {
    const held = gate();
    core.model.enqueue(textUntil(held.opened, ['one '], ['two']));
    const { runId } = await core.runs.start(OWNER, { prompt: 'x' });
    await core.follow(runId, (e) => e.type === 'text');
    await db.query(`UPDATE runs SET lease_owner = 'another-process' WHERE id = $1`, [runId]);
    const before = await stored(runId);
    const following = core.follow(runId);
    held.open();
    const seen = await following;
    expect(types(seen)).toEqual(['run_started', 'text']); // closed without done or error
    const after = await stored(runId);
    expect(after.events).toEqual(before.events);
    expect(after.run).toMatchObject({ status: 'running', leaseOwner: 'another-process' });
    expect(core.module.get(DrivenRuns).localRunIds).not.toContain(runId);
  });

  it('a read runs while its step is recorded; what it read is stored and shown only after the step', async () => {
    writeFileSync(join(core.workspace, 'held-notes.txt'), 'the notes\n');
    const ran = jest.spyOn(core.module.get(ToolRunner), 'run');
    core.model.enqueue(calls({ name: 'read_file', arguments: { path: 'held-notes.txt' } }), answer('Read.'));
    await db.query(`SELECT pg_advisory_lock($1)`, [HELD_LOCK]);
    let runId: string;
    try {
      ({ runId } = await core.runs.start(OWNER, { prompt: 'read it' }));
      // The step's record waits for the lock, and the read has already answered.
      await eventually(() => ran.mock.calls.length > 0);
      await expect(ran.mock.results[0].value).resolves.toMatchObject({ content: 'the notes\n' });
      expect((await stored(runId)).events.map((e) => e.type)).toEqual(['run_started']);
    } finally {
      await db.query(`SELECT pg_advisory_unlock($1)`, [HELD_LOCK]);
      ran.mockRestore();
    }
    const seen = await core.follow(runId);
    expect(types(seen)).toEqual(TOOL_STEP_THEN_ANSWER);
    expect(body(seen[3])).toMatchObject({ content: 'the notes\n', isError: false });
    expect((await stored(runId)).events).toEqual(asStored(seen));
  });

  it('a write waits for its step to be recorded', async () => {
    const ran = jest.spyOn(core.module.get(ToolRunner), 'run');
    core.model.enqueue(
      calls({ name: 'write_file', arguments: { path: 'held-new.txt', content: 'written' } }),
      answer('Written.'),
    );
    await db.query(`SELECT pg_advisory_lock($1)`, [HELD_LOCK]);
    let runId: string;
    try {
      ({ runId } = await core.runs.start(OWNER, { prompt: 'write it', session: { mode: 'write' } }));
      // The step's statement waits for the lock.
      await eventually(
        async () =>
          (await db.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)).rowCount ===
          1,
      );
      expect(ran).not.toHaveBeenCalled();
      expect(existsSync(join(core.workspace, 'held-new.txt'))).toBe(false);
    } finally {
      await db.query(`SELECT pg_advisory_unlock($1)`, [HELD_LOCK]);
      ran.mockRestore();
    }
    expect(types(await core.follow(runId))).toEqual(TOOL_STEP_THEN_ANSWER);
    expect(existsSync(join(core.workspace, 'held-new.txt'))).toBe(true);
  });

  it.each([
    [
      'a read may have run, but nothing of it is stored or shown, and the model is not asked again',
      'read_file',
      { path: 'slow-poison.txt' },
    ],
    [
      'a write never runs: nothing changes that the store does not hold, and the model is not asked again',
      'write_file',
      { path: 'slow-poison-new.txt', content: 'written' },
    ],
  ])('a step the store refuses fails the run; %s', async (_, name, args) => {
    writeFileSync(join(core.workspace, 'slow-poison.txt'), 'before\n');
    const run = jest.spyOn(core.module.get(ToolRunner), 'run');
    core.model.enqueue(calls({ name, arguments: args }), answer('never shown'));
    let seen: SerializedEvent[];
    let runId: string;
    try {
      ({ runId } = await core.runs.start(OWNER, { prompt: 'go', session: { mode: 'write' } }));
      seen = await core.follow(runId);
      if (name !== 'read_file') expect(run).not.toHaveBeenCalled();
    } finally {
      run.mockRestore();
    }
    expect(types(seen)).toEqual(['run_started', 'error']);
    const s = await stored(runId);
    expect(s.run).toMatchObject({ status: 'failed', error: { code: 'INTERNAL_ERROR' } });
    expect(s.events).toEqual(asStored(seen));
    expect(s.messages.map((m) => m.role)).toEqual(['user']);
    expect((await db.query(`SELECT 1 FROM tool_calls WHERE run_id = $1`, [runId])).rows).toEqual([]);
    expect(existsSync(join(core.workspace, 'slow-poison-new.txt'))).toBe(false);
    expect(core.model.requests).toHaveLength(1);
  });

  it('a model call that ended while a result before it was being refused is counted all the same', async () => {
    writeFileSync(join(core.workspace, 'late.txt'), 'slow-poison\n');
    core.model.enqueue(calls({ name: 'read_file', arguments: { path: 'late.txt' } }), answer('Done.'));
    // The read is held until its step is stored; its result (slow-poison) is refused once the next
    // call has ended.
    const runner = core.module.get(ToolRunner);
    const original = runner.run.bind(runner);
    const slow = gate();
    const ran = jest.spyOn(runner, 'run').mockImplementationOnce(async (tool, args, ctx) => {
      await slow.opened;
      return original(tool, args, ctx);
    });
    const { runId } = await core.runs.start(OWNER, { prompt: 'read late.txt' });
    try {
      await eventually(async () => (await stored(runId)).events.some((e) => e.type === 'step_finished'));
    } finally {
      slow.open();
      ran.mockRestore();
    }
    const seen = await core.follow(runId);
    // The refused result is answered with an error as the run ends.
    expect(types(seen)).toEqual([
      'run_started',
      'tool_call_start',
      'step_finished',
      'tool_call_result',
      'error',
    ]);
    expect(body(seen[3])).toMatchObject({ isError: true });
    expect(core.model.requests).toHaveLength(2);
    const counted = await db.query(
      `SELECT iteration, completion_tokens > 0 AS used FROM model_calls WHERE run_id = $1 ORDER BY iteration`,
      [runId],
    );
    expect(counted.rows).toEqual([
      { iteration: 1, used: true },
      { iteration: 2, used: true },
    ]);
  });

  it('a tool result the store refuses while the next model call streams fails the run, not the process', async () => {
    const stray: unknown[] = [];
    const onStray = (reason: unknown) => stray.push(reason);
    process.on('unhandledRejection', onStray);
    try {
      writeFileSync(join(core.workspace, 'bad.txt'), 'poison\n');
      const never = gate(); // the second model call is never let go: only the failed write can end the run
      core.model.enqueue(
        calls({ name: 'read_file', arguments: { path: 'bad.txt' } }),
        textUntil(never.opened, []),
      );
      const { runId } = await core.runs.start(OWNER, { prompt: 'read bad.txt' });
      const seen = await core.follow(runId);
      expect(types(seen)).toEqual([
        'run_started',
        'tool_call_start',
        'step_finished',
        'tool_call_result',
        'error',
      ]);
      expect(body(seen[3])).toMatchObject({ isError: true, errorCode: 'EXECUTION_ERROR' });
      const s = await stored(runId);
      expect(s.run).toMatchObject({ status: 'failed', error: { code: 'INTERNAL_ERROR' } });
      expect(s.events).toEqual(asStored(seen));
      const call = await db.query(`SELECT status FROM tool_calls WHERE run_id = $1`, [runId]);
      expect(call.rows).toEqual([{ status: 'error' }]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(stray).toEqual([]);
    } finally {
      process.off('unhandledRejection', onStray);
    }
  });
});

describe('the orchestrator while the store is unreachable (injected: PostgreSQL answers 57P03 for the run)', () => {
  let core: CoreApp;
  let db: Client;

  beforeAll(async () => {
    // A two-second lease, renewed every third of it; the supervisor looks for expired leases every second.
    core = await startCore({ RUN_LEASE_MS: '2000' });
    db = await connect(core.databaseUrl);
    // While a run is listed, every write of it — its events and its row (lease renewals included) —
    // fails as if the database were starting up: to the process, the store is down.
    await db.query(`
      CREATE TABLE unreachable_for (run_id uuid PRIMARY KEY);
      CREATE SEQUENCE refused_event_writes; -- counts refused tries (a sequence is not rolled back)
      CREATE FUNCTION unreachable() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM unreachable_for WHERE run_id = NEW.run_id) THEN
          PERFORM nextval('refused_event_writes');
          RAISE EXCEPTION 'the database system is starting up' USING ERRCODE = '57P03';
        END IF;
        RETURN NEW;
      END $$;
      CREATE FUNCTION unreachable_run() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM unreachable_for WHERE run_id = NEW.id) THEN
          -- A write of events moves last_seq (a lease renewal does not): count those tries.
          IF NEW.last_seq IS DISTINCT FROM OLD.last_seq THEN PERFORM nextval('refused_event_writes'); END IF;
          RAISE EXCEPTION 'the database system is starting up' USING ERRCODE = '57P03';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER unreachable BEFORE INSERT ON run_events FOR EACH ROW EXECUTE FUNCTION unreachable();
      CREATE TRIGGER unreachable_run BEFORE UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION unreachable_run();`);
  });
  afterAll(async () => {
    await db.end();
    await core.close();
  });

  const statusOf = async (runId: string) =>
    (await db.query(`SELECT status, error FROM runs WHERE id = $1`, [runId])).rows[0] as {
      status: string;
      error: { code: string } | null;
    };

  it('store back within the lease: the run goes on and completes; the stream equals the log', async () => {
    const held = gate();
    core.model.enqueue(textUntil(held.opened, ['before '], ['after']));
    const { runId } = await core.runs.start(OWNER, { prompt: 'x' });
    await core.follow(runId, (e) => e.type === 'text');
    await db.query('INSERT INTO unreachable_for VALUES ($1)', [runId]);
    const refused = async () =>
      Number(
        (
          await db.query(
            `SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS n FROM refused_event_writes`,
          )
        ).rows[0].n,
      );
    const before = await refused();
    const following = core.follow(runId);
    held.open();
    // The answer's end is refused twice (retried, not shown); then the store is back, within the lease.
    await eventually(async () => (await refused()) >= before + 2);
    await db.query('DELETE FROM unreachable_for WHERE run_id = $1', [runId]);
    const seen = await following;
    expect(types(seen)).toEqual(['run_started', 'text', 'step_finished', 'done']);
    expect((await statusOf(runId)).status).toBe('completed');
    const log = await db.query(`SELECT seq, type FROM run_events WHERE run_id = $1 ORDER BY seq`, [runId]);
    expect(log.rows).toEqual(seen.map((e) => ({ seq: e.seq, type: e.type })));
  });

  it('store down past the lease: the process lets the run go (no final event), then takes it over once the store is back', async () => {
    const held = gate();
    core.model.enqueue(textUntil(held.opened, ['kept '], ['lost']), answer('continued'));
    const { runId } = await core.runs.start(OWNER, { prompt: 'x' });
    await core.follow(runId, (e) => e.type === 'text');
    await db.query('INSERT INTO unreachable_for VALUES ($1)', [runId]);
    const following = core.follow(runId);
    held.open();
    const seen = await following;
    expect(types(seen)).toEqual(['run_started', 'text']); // closed without done or error
    expect(core.module.get(DrivenRuns).localRunIds).not.toContain(runId);
    expect((await statusOf(runId)).status).toBe('running');

    await db.query('DELETE FROM unreachable_for WHERE run_id = $1', [runId]);
    await eventually(async () => (await statusOf(runId)).status === 'completed', 10_000);
    const after = await core.follow(runId);
    expect(types(after)).toEqual([
      'run_started',
      'text',
      'step_finished',
      'run_resumed',
      'text',
      'step_finished',
      'done',
    ]);
    expect(after.map((e) => e.seq)).toEqual(after.map((_, i) => i + 1));
    expect(body(after[2])).toMatchObject({ iteration: 1, finishReason: 'interrupted' });
    expect(body(after[3])).toMatchObject({ reason: 'process_lost', iteration: 2 });
    expect(body(after.at(-1)!)).toMatchObject({ status: 'completed', iterations: 2 });
    // The model went on from the text the stream had shown, and only that.
    expect(core.model.requests.at(-1)!.messages.slice(-2)).toEqual([
      { role: 'user', content: 'x' },
      { role: 'assistant', content: 'kept ' },
    ]);
    const messages = await db.query(`SELECT role, content FROM messages WHERE run_id = $1 ORDER BY seq`, [
      runId,
    ]);
    expect(messages.rows).toEqual([
      { role: 'user', content: 'x' },
      { role: 'assistant', content: 'kept ' },
      { role: 'assistant', content: 'continued' },
    ]);
  });
});
