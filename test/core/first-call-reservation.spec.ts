import { randomUUID } from 'node:crypto';
import { RunAccounting } from '../../src/agent/run-accounting.service';
import { BudgetStore } from '../../src/store/budget-store.service';
import { startCore, type CoreApp } from '../support/core-app';

const MAX_OUTPUT = 300;

/**
 * A start's first call under the key's limits (RunAccounting.reserveFirst, CallsAhead): reserved on
 * a tokens limit; on a usd limit and a model without a price, granted without a reservation — as the
 * loop's own reservation does — so that the loop keeps the call sent with the start instead of
 * stopping it and sending another. Without a limit, nothing is reserved.
 */
describe('a first call reserved before its start', () => {
  let core: CoreApp;
  let accounting: RunAccounting;
  let store: BudgetStore;

  beforeAll(async () => {
    core = await startCore({
      API_KEYS: 'tokens:sk-tokens,usd:sk-usd,free:sk-free',
      BUDGETS: 'tokens=100000tokens/day,usd=5usd/day',
      LLM_MAX_OUTPUT_TOKENS: String(MAX_OUTPUT),
    });
    accounting = core.module.get(RunAccounting);
    store = core.module.get(BudgetStore);
  });
  afterAll(() => core.close());

  const reserve = (owner: string, model: string) =>
    accounting.reserveFirst(randomUUID(), { owner, endUser: null }, model, 120);

  it('reserves the prompt and the most output on a tokens limit', async () => {
    expect(await reserve('tokens', 'openai/gpt-4.1-mini')).toBe(MAX_OUTPUT);
    const [counter] = await store.counters([{ counter: 'tokens', window: 'day' }]);
    expect(counter.reservedTokens).toBe(120 + MAX_OUTPUT);
  });

  it('grants a model without a price its output under a usd limit, reserving nothing', async () => {
    expect(accounting.keyLimited({ owner: 'usd', endUser: null })).toBe(true);
    expect(await reserve('usd', 'openai/no-such-priced-model')).toBe(MAX_OUTPUT);
    const [counter] = await store.counters([{ counter: 'usd', window: 'day' }]);
    expect(counter.reservedUsd).toBe(0);
  });

  it('reserves nothing without a limit', async () => {
    expect(accounting.keyLimited({ owner: 'free', endUser: null })).toBe(false);
    expect(await reserve('free', 'openai/gpt-4.1-mini')).toBeUndefined();
  });
});
