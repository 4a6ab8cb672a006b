import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { BudgetStore, type ReservationAsk } from '../../src/store/budget-store.service';
import { startCore, type CoreApp } from '../support/core-app';

/**
 * Reservations asked at once leave together (ReservationBatcher, `reserve_budgets`): one statement
 * locks the key's counter once for all of them, and each is made exactly as alone — no limit passed,
 * every granted one held by its holder, one replacing what its holder held.
 */
describe('reservations made together', () => {
  let core: CoreApp;
  let store: BudgetStore;
  let statements: string[];
  let spy: jest.SpyInstance;

  beforeAll(async () => {
    core = await startCore();
    store = core.module.get(BudgetStore);
    const manager = core.module.get(DataSource).manager;
    statements = [];
    const query = manager.query.bind(manager);
    spy = jest
      .spyOn(manager, 'query')
      .mockImplementation((sql: string, params?: Parameters<typeof query>[1]) => {
        statements.push(sql);
        return query(sql, params);
      });
  });
  afterAll(async () => {
    spy.mockRestore();
    await core.close();
  });
  beforeEach(() => {
    statements.length = 0;
  });

  /** A key with room for `amount` tokens a day. */
  const limitOf = (owner: string, amount: number) => ({
    counter: owner,
    window: 'day' as const,
    unit: 'tokens' as const,
    amount,
  });
  const ask = (owner: string, amount: number, holder = randomUUID()): ReservationAsk => ({
    runId: holder,
    owner,
    limits: [limitOf(owner, amount)],
    promptTokens: 100,
    promptUsd: 0,
    outputUsdPerToken: 0,
    maxOutput: 100,
    minOutput: 100,
  });
  const held = (holder: string) =>
    core.module
      .get(DataSource)
      .query<{ tokens: number }[]>(`SELECT tokens::int FROM budget_reservations WHERE run_id = $1`, [holder]);

  it('grants exactly as many as the limit has room for, all in one statement', async () => {
    const owner = `k-${randomUUID().slice(0, 8)}`;
    const asks = Array.from({ length: 50 }, () => ask(owner, 20 * 200));
    const answers = await Promise.all(asks.map((a) => store.reserve(a)));
    expect(answers.filter((a) => 'granted' in a)).toHaveLength(20);
    expect(answers.filter((a) => 'refused' in a)).toHaveLength(30);
    const [counter] = await store.counters([limitOf(owner, 0)]);
    expect(counter.reservedTokens).toBe(20 * 200);
    for (const [i, a] of asks.entries()) {
      expect(await held(a.runId)).toEqual('granted' in answers[i] ? [{ tokens: 200 }] : []);
    }
    // Asked at once, they went together.
    expect(statements.filter((s) => s.includes('reserve_budget'))).toEqual([
      expect.stringContaining('reserve_budgets('),
    ]);
  });

  it('replaces what a holder held when asked to, beside others in the same batch', async () => {
    const owner = `k-${randomUUID().slice(0, 8)}`;
    const holder = randomUUID();
    expect(await store.reserve(ask(owner, 10_000, holder))).toEqual({ granted: 100 });
    const answers = await Promise.all([
      store.reserve(ask(owner, 10_000)),
      store.reserve({ ...ask(owner, 10_000, holder), promptTokens: 300 }, true),
      store.reserve(ask(owner, 10_000)),
    ]);
    expect(answers).toEqual([{ granted: 100 }, { granted: 100 }, { granted: 100 }]);
    expect(
      statements.filter((s) => s.startsWith('SELECT place, granted FROM reserve_budgets(')),
    ).toHaveLength(1);
    expect(await held(holder)).toEqual([{ tokens: 400 }]);
    const [counter] = await store.counters([limitOf(owner, 0)]);
    expect(counter.reservedTokens).toBe(200 + 400 + 200);
  });

  it('keeps what a call gave back beside the counter until its next reservation folds it in', async () => {
    const owner = `k-${randomUUID().slice(0, 8)}`;
    const db = core.module.get(DataSource);
    const raw = async () =>
      (
        await db.query<{ reserved: number }[]>(
          `SELECT reserved_tokens::int AS reserved FROM key_spend WHERE owner = $1`,
          [owner],
        )
      )[0].reserved;
    const deltas = async () =>
      (await db.query<unknown[]>(`SELECT 1 FROM key_spend_deltas WHERE owner = $1`, [owner])).length;
    // The periodic fold (RunSupervisor) held off, so that only what this test does folds.
    const fold = store.foldSpend.bind(store);
    const periodic = jest.spyOn(store, 'foldSpend').mockResolvedValue();
    const holder = randomUUID();
    expect(await store.reserve(ask(owner, 10_000, holder))).toEqual({ granted: 100 });
    await store.release(holder);
    // Not on the counter's row yet, which still holds the reservation: never more room than there is.
    expect(await raw()).toBe(200);
    expect(await deltas()).toBe(1);
    const [seen] = await store.counters([limitOf(owner, 0)]);
    expect(seen.reservedTokens).toBe(0);
    // The counter's next reservation folds it in under the counter's lock.
    expect(await store.reserve(ask(owner, 10_000))).toEqual({ granted: 100 });
    expect(await raw()).toBe(200);
    expect(await deltas()).toBe(0);
    // One no reservation folds is folded by the periodic fold.
    await store.release(
      (
        await db.query<{ run_id: string }[]>(`SELECT run_id FROM budget_reservations WHERE owner = $1`, [
          owner,
        ])
      )[0].run_id,
    );
    expect(await deltas()).toBe(1);
    periodic.mockRestore();
    await fold();
    expect(await deltas()).toBe(0);
    expect(await raw()).toBe(0);
  });

  it('decides each in order as one alone would: the output that fits a usd limit, a wait, a counter that is gone', async () => {
    const owner = `k-${randomUUID().slice(0, 8)}`;
    const usd = { counter: owner, window: 'day' as const, unit: 'usd' as const, amount: 1 };
    const priced = (): ReservationAsk => ({
      runId: randomUUID(),
      owner,
      limits: [usd],
      promptTokens: 100,
      promptUsd: 0.1,
      outputUsdPerToken: 0.001,
      maxOutput: 500,
      minOutput: 100,
    });
    const answers = await Promise.all([
      store.reserve(priced()),
      store.reserve(priced()),
      store.reserve(priced()),
      // A run's own counter that does not exist (its run is not running): never made, no room.
      store.reserve({
        ...priced(),
        limits: [{ counter: `run/${randomUUID()}`, window: 'run', unit: 'tokens', amount: 10_000 }],
      }),
    ]);
    // $0.1 + 500 × $0.001; then $0.1 + 300 × $0.001 fills the dollar; then none fits until one is given back.
    expect(answers).toEqual([{ granted: 500 }, { granted: 300 }, { refused: 'wait' }, { refused: 'spent' }]);
    const [counter] = await store.counters([usd]);
    expect(counter.reservedUsd).toBeCloseTo(1, 9);
  });
});
