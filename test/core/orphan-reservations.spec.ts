import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { BudgetStore } from '../../src/store/budget-store.service';
import { startCore, type CoreApp } from '../support/core-app';

/**
 * A reservation no run holds — a start's first call whose process died before the start was
 * stored, an on-demand summary's whose process died — is given back once it is old
 * (BudgetStore.releaseOrphans), not held until its window rolls over; a young one, and any a run
 * holds, stay.
 */
describe('reservations no run holds', () => {
  let core: CoreApp;
  let store: BudgetStore;
  let db: DataSource;

  beforeAll(async () => {
    core = await startCore();
    store = core.module.get(BudgetStore);
    db = core.module.get(DataSource);
  });
  afterAll(() => core.close());

  const limit = (owner: string) => ({
    counter: owner,
    window: 'day' as const,
    unit: 'tokens' as const,
    amount: 10_000,
  });

  async function reserve(holder: string, owner: string): Promise<void> {
    const r = await store.reserve({
      runId: holder,
      owner,
      limits: [limit(owner)],
      promptTokens: 100,
      promptUsd: 0,
      outputUsdPerToken: 0,
      maxOutput: 50,
      minOutput: 16,
    });
    expect(r).toEqual({ granted: 50 });
  }

  async function reserved(owner: string): Promise<number> {
    const [state] = await store.counters([limit(owner)]);
    return state.reservedTokens;
  }

  it('gives back an old one, keeps a young one', async () => {
    const owner = `key-${randomUUID()}`;
    const lost = randomUUID();
    const young = randomUUID();
    await reserve(lost, owner);
    await reserve(young, owner);
    expect(await reserved(owner)).toBe(300);
    await db.query(
      `UPDATE budget_reservations SET created_at = now() - interval '20 minutes' WHERE run_id = $1`,
      [lost],
    );

    await store.releaseOrphans(15 * 60_000);

    expect(await reserved(owner)).toBe(150);
    const left: { runId: string }[] = await db.query(
      `SELECT run_id AS "runId" FROM budget_reservations WHERE counter = $1`,
      [owner],
    );
    expect(left.map((r) => r.runId)).toEqual([young]);
  });
});
