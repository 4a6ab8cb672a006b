import { TurnGate, Turns } from '../../src/common/turns';

/** Resolves after `n` turns of the event loop. */
const turnsLater = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('Turns', () => {
  it('takes at most perTurn items a turn, in the order they were added', async () => {
    const taken: string[][] = [];
    let turn: string[] = [];
    const turns = new Turns<string>(2, (item) => turn.push(item));
    for (const item of ['a', 'b', 'c', 'd', 'e']) turns.add(item);
    expect(turns.has('a')).toBe(true);
    for (let i = 0; i < 4; i++) {
      await turnsLater(1);
      taken.push(turn);
      turn = [];
    }
    expect(taken).toEqual([['a', 'b'], ['c', 'd'], ['e'], []]);
    expect(turns.has('a')).toBe(false);
  });

  it('keeps the place of an item added again, and forgets a deleted one', async () => {
    const taken: string[] = [];
    const turns = new Turns<string>(10, (item) => taken.push(item));
    turns.add('a');
    turns.add('b');
    turns.add('a');
    turns.add('c');
    expect(turns.delete('b')).toBe(true);
    expect(turns.delete('b')).toBe(false);
    await turnsLater(1);
    expect(taken).toEqual(['a', 'c']);
  });

  it('puts an item added again while it is taken behind the others', async () => {
    const taken: string[] = [];
    const turns = new Turns<string>(2, (item) => {
      taken.push(item);
      if (item === 'a' && taken.length === 1) turns.add('a');
    });
    for (const item of ['a', 'b', 'c']) turns.add(item);
    await turnsLater(3);
    expect(taken).toEqual(['a', 'b', 'c', 'a']);
  });
});

describe('TurnGate', () => {
  it('lets perTurn callers through a turn, in the order they came', async () => {
    const gate = new TurnGate(2);
    const passed: number[] = [];
    const all = [1, 2, 3, 4, 5].map((n) => gate.pass().then(() => passed.push(n)));
    expect(passed).toEqual([]);
    await turnsLater(1);
    expect(passed).toEqual([1, 2]);
    await turnsLater(1);
    expect(passed).toEqual([1, 2, 3, 4]);
    await Promise.all(all);
    expect(passed).toEqual([1, 2, 3, 4, 5]);
  });
});
