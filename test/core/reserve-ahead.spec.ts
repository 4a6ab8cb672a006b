import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from 'pg';
import { BudgetStore } from '../../src/store/budget-store.service';
import { RunJournal } from '../../src/store/run-journal.service';
import { ToolRunner } from '../../src/tools/tool-runner.service';
import { connect } from '../support/database';
import { eventually } from '../support/eventually';
import { startCore, type CoreApp } from '../support/core-app';
import { answer, calls, gate } from '../support/scripted-model';

const MAX_OUTPUT = 300;
/** The scripted model's usage of every call (scripted-model.ts). */
const CALL_TOKENS = 15;

/**
 * Under a limit, a run's next model call is reserved while the step before it is stored and its
 * calls run (RunOrchestrator.reserveAhead), in place of what the run holds: the step's statement
 * keeps the run's reservation, and the counters still end with exactly what was used and nothing
 * reserved.
 */
describe('the next call reserved ahead, while the step before it is stored', () => {
  let core: CoreApp;
  let db: Client;
  let reserve: jest.SpyInstance;

  beforeAll(async () => {
    core = await startCore({
      API_KEYS: 'tokens:sk-tokens',
      BUDGETS: 'tokens=1000000tokens/day',
      LLM_MAX_OUTPUT_TOKENS: String(MAX_OUTPUT),
    });
    db = await connect(core.databaseUrl);
    reserve = jest.spyOn(core.module.get(BudgetStore), 'reserve');
  });
  afterAll(async () => {
    reserve.mockRestore();
    await db.end();
    await core.close();
  });
  beforeEach(() => {
    core.model.reset();
    reserve.mockClear();
  });

  /** The key's counter for today (with what is not folded in yet), and the reservations a run still holds. */
  async function standing(runId: string) {
    const [counter] = await core.module.get(BudgetStore).counters([{ counter: 'tokens', window: 'day' }]);
    const held = await db.query(`SELECT 1 FROM budget_reservations WHERE run_id = $1`, [runId]);
    return { tokens: counter.tokens, reserved: counter.reservedTokens, held: held.rowCount };
  }

  /** Runs a read of `file` then an answer, its read held until the test lets it go. */
  async function heldRead(file: string, session: { maxTokens?: number } = {}) {
    const before = await standing('00000000-0000-0000-0000-000000000000');
    const held = gate();
    const runner = core.module.get(ToolRunner);
    const real = runner.run.bind(runner);
    const run = jest.spyOn(runner, 'run').mockImplementation(async (...args) => {
      await held.opened;
      return real(...args);
    });
    core.model.enqueue(calls({ name: 'read_file', arguments: { path: file } }), answer('Read.'));
    const { runId } = await core.runs.start('tokens', { prompt: `read ${file}`, session });
    /** Lets the read go and follows the run to its end. */
    const finish = async () => {
      held.open();
      try {
        return await core.follow(runId);
      } finally {
        run.mockRestore();
      }
    };
    return { runId, before, finish };
  }

  it('reserves the next call while the read runs, and uses that reservation', async () => {
    writeFileSync(join(core.workspace, 'short.txt'), 'a short file\n');
    const { runId, before, finish } = await heldRead('short.txt');
    // The read is held: the next call has been reserved already, in place of the first.
    await eventually(() => reserve.mock.calls.some(([, replacing]) => replacing === true));
    expect((await standing(runId)).held).toBeGreaterThan(0);
    const seen = await finish();
    expect(seen.at(-1)?.type).toBe('done');
    // The first call's reservation and the one made ahead: the loop reserved nothing itself.
    expect(reserve.mock.calls.map(([, replacing]) => replacing === true)).toEqual([false, true]);
    expect(core.model.requests[1].maxOutputTokens).toBe(MAX_OUTPUT);
    const after = await standing(runId);
    expect(after).toEqual({ tokens: before.tokens + 2 * CALL_TOKENS, reserved: before.reserved, held: 0 });
  });

  it('reserves ahead only once the step before it is stored: its call is never out of the counters', async () => {
    writeFileSync(join(core.workspace, 'counted.txt'), 'a file read while its step is stored\n');
    const journal = core.module.get(RunJournal);
    const runner = core.module.get(ToolRunner);
    const realRecord = journal.recordStep.bind(journal);
    const realRun = runner.run.bind(runner);
    const held = gate();
    let read = false;
    let stored = false;
    const storedAtReserve: boolean[] = [];
    jest.spyOn(journal, 'recordStep').mockImplementation(async (...args) => {
      await held.opened;
      const written = await realRecord(...args);
      stored = true;
      return written;
    });
    jest.spyOn(runner, 'run').mockImplementation(async (...args) => {
      try {
        return await realRun(...args);
      } finally {
        read = true;
      }
    });
    reserve.mockImplementation(function (this: BudgetStore, ...args: Parameters<BudgetStore['reserve']>) {
      if (args[1] === true) storedAtReserve.push(stored);
      return BudgetStore.prototype.reserve.apply(this, args);
    });
    try {
      core.model.enqueue(calls({ name: 'read_file', arguments: { path: 'counted.txt' } }), answer('Read.'));
      const { runId } = await core.runs.start('tokens', { prompt: 'read counted.txt' });
      // The step's record is held while its read runs (it starts at once): nothing reserved ahead yet.
      await eventually(() => read);
      expect(storedAtReserve).toEqual([]);
      held.open();
      expect((await core.follow(runId)).at(-1)?.type).toBe('done');
      expect(storedAtReserve).toEqual([true]);
    } finally {
      held.open();
      jest.restoreAllMocks();
      reserve = jest.spyOn(core.module.get(BudgetStore), 'reserve');
    }
  });

  it('reserves the call again when its results are longer than what was reserved ahead for them', async () => {
    writeFileSync(join(core.workspace, 'long.txt'), 'many different words in a line\n'.repeat(2_000));
    const { runId, before, finish } = await heldRead('long.txt');
    await eventually(() => reserve.mock.calls.some(([, replacing]) => replacing === true));
    expect((await finish()).at(-1)?.type).toBe('done');
    expect(reserve.mock.calls.map(([, replacing]) => replacing === true)).toEqual([false, true, false]);
    expect(await standing(runId)).toEqual({
      tokens: before.tokens + 2 * CALL_TOKENS,
      reserved: before.reserved,
      held: 0,
    });
  });

  it('adds a call kept for the next one to the run’s own counter by name', async () => {
    writeFileSync(join(core.workspace, 'own.txt'), 'a file under a session limit\n');
    const { runId, before, finish } = await heldRead('own.txt', { maxTokens: 100_000 });
    await eventually(() => reserve.mock.calls.some(([, replacing]) => replacing === true));
    // The first step is stored: its call is on the run's counter although nothing was given back.
    await eventually(async () => {
      const [own] = await core.module.get(BudgetStore).counters([{ counter: `run/${runId}`, window: 'run' }]);
      return own.tokens === CALL_TOKENS;
    });
    expect((await finish()).at(-1)?.type).toBe('done');
    expect(await standing(runId)).toEqual({
      tokens: before.tokens + 2 * CALL_TOKENS,
      reserved: before.reserved,
      held: 0,
    });
  });
});
