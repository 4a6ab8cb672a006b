import { TickGate, Ticks } from '../../src/common/ticks';

/** Resolves after `n` ticks of the event loop. */
const ticksLater = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('Ticks', () => {
  it('takes at most perTick items a tick, in the order they were added', async () => {
    const taken: string[][] = [];
    let tick: string[] = [];
    const ticks = new Ticks<string>(2, (item) => tick.push(item));
    for (const item of ['a', 'b', 'c', 'd', 'e']) ticks.add(item);
    expect(ticks.has('a')).toBe(true);
    for (let i = 0; i < 4; i++) {
      await ticksLater(1);
      taken.push(tick);
      tick = [];
    }
    expect(taken).toEqual([['a', 'b'], ['c', 'd'], ['e'], []]);
    expect(ticks.has('a')).toBe(false);
  });

  it('keeps the place of an item added again, and forgets a deleted one', async () => {
    const taken: string[] = [];
    const ticks = new Ticks<string>(10, (item) => taken.push(item));
    ticks.add('a');
    ticks.add('b');
    ticks.add('a');
    ticks.add('c');
    expect(ticks.delete('b')).toBe(true);
    expect(ticks.delete('b')).toBe(false);
    await ticksLater(1);
    expect(taken).toEqual(['a', 'c']);
  });

  it('puts an item added again while it is taken behind the others', async () => {
    const taken: string[] = [];
    const ticks = new Ticks<string>(2, (item) => {
      taken.push(item);
      if (item === 'a' && taken.length === 1) ticks.add('a');
    });
    for (const item of ['a', 'b', 'c']) ticks.add(item);
    await ticksLater(3);
    expect(taken).toEqual(['a', 'b', 'c', 'a']);
  });
});

describe('TickGate', () => {
  it('lets perTick callers through a tick, in the order they came', async () => {
    const gate = new TickGate(2);
    const passed: number[] = [];
    const all = [1, 2, 3, 4, 5].map((n) => gate.pass().then(() => passed.push(n)));
    expect(passed).toEqual([]);
    await ticksLater(1);
    expect(passed).toEqual([1, 2]);
    await ticksLater(1);
    expect(passed).toEqual([1, 2, 3, 4]);
    await Promise.all(all);
    expect(passed).toEqual([1, 2, 3, 4, 5]);
  });
});
