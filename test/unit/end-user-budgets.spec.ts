import { loadConfig } from '../../src/config/app-config';
import { limitsOf } from '../../src/config/team-config';

const keys = { API_KEYS: 'alice:a,bob:b' };

describe('BUDGETS entries for end users (<key>/<end user>, <key>/*)', () => {
  it('reads them, and limits each end user on a counter of their own beside the key', () => {
    const { budgets } = loadConfig({
      ...keys,
      BUDGETS: 'alice=5usd/day,alice/ann@x.io=1usd/day,alice/*=100000tokens/hour,*=2usd/month',
    });
    expect(limitsOf(budgets, 'alice', 'ann@x.io')).toEqual([
      { amount: 5, unit: 'usd', window: 'day', counter: 'alice' },
      { amount: 1, unit: 'usd', window: 'day', counter: 'alice/ann@x.io' },
    ]);
    expect(limitsOf(budgets, 'alice', 'ben')).toEqual([
      { amount: 5, unit: 'usd', window: 'day', counter: 'alice' },
      { amount: 100000, unit: 'tokens', window: 'hour', counter: 'alice/ben' },
    ]);
    expect(limitsOf(budgets, 'alice', null)).toEqual([
      { amount: 5, unit: 'usd', window: 'day', counter: 'alice' },
    ]);
    // bob has no entry of his own, nor for his end users: `*` limits the key, nothing each end user.
    expect(limitsOf(budgets, 'bob', 'cy')).toEqual([
      { amount: 2, unit: 'usd', window: 'month', counter: 'bob' },
    ]);
  });

  it('refuses end-user names outside [A-Za-z0-9._@-], unknown keys, */x and two limits of one kind', () => {
    for (const bad of [
      'alice/ann smith=1usd/day',
      'alice/a:b=1usd/day',
      'carol/ann=1usd/day',
      '*/ann=1usd/day',
    ]) {
      expect(() => loadConfig({ ...keys, BUDGETS: bad })).toThrow(/^BUDGETS=/);
    }
    expect(() => loadConfig({ ...keys, BUDGETS: 'alice/*=1usd/day,alice/*=2usd/day' })).toThrow(
      /alice\/\* has two usd\/day limits/,
    );
  });
});
