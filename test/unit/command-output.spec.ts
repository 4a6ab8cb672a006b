import { HeadTailCollector } from '../../src/tools/exec/head-tail-collector';
import { viewOutput } from '../../src/tools/exec/command-output';

function collected(head: number, tail: number, ...chunks: string[]) {
  const c = new HeadTailCollector(head, tail);
  for (const chunk of chunks) c.push(Buffer.from(chunk, 'utf8'));
  return c.kept();
}

describe('viewOutput (get_command_output over a head-and-tail buffer)', () => {
  it('reads forward from an offset page by page, every kept byte exactly once, to the total', () => {
    const text = Array.from({ length: 50 }, (_, i) => `line ${i}\n`).join('');
    const kept = collected(1000, 1000, text);
    let since = 0;
    let read = '';
    for (let i = 0; i < 100 && since < kept.total; i++) {
      const view = viewOutput(kept, { since }, 64);
      expect(Buffer.byteLength(view.text)).toBeLessThanOrEqual(64);
      read += view.text;
      since = view.next;
    }
    expect(read).toBe(text);
    expect(since).toBe(kept.total);
  });

  it('names the dropped bytes once, also when `since` points into them, and goes on with the tail', () => {
    const kept = collected(4, 6, 'HEAD', 'x'.repeat(100), 'TAIL!\n');
    expect(kept.tailStart).toBeGreaterThan(4);
    const all = viewOutput(kept, { since: 0 }, 10_000);
    expect(all.text).toMatch(/^HEAD\n\[\d+ bytes dropped here/);
    expect(all.text.endsWith('TAIL!\n')).toBe(true);
    expect(all.next).toBe(kept.total);
    const inGap = viewOutput(kept, { since: 50 }, 10_000);
    const dropped = Number(/\[(\d+) bytes dropped/.exec(inGap.text)?.[1]);
    expect(dropped).toBe(kept.tailStart - 50);
    expect(viewOutput(kept, { since: kept.total + 5 }, 10_000)).toEqual({
      text: '',
      next: kept.total,
      cut: false,
    });
  });

  it('never splits a character, keeps the newest lines when asked lines do not fit, and greps no note', () => {
    const kept = collected(1000, 1000, 'é'.repeat(20));
    const first = viewOutput(kept, { since: 0 }, 5);
    expect(first.text).toBe('éé');
    expect(first.next).toBe(4);
    const lines = collected(1000, 1000, 'a1\nb2\na3\nb4\n');
    expect(viewOutput(lines, { grep: (l) => l.startsWith('a') }, 100).text).toBe('a1\na3');
    expect(viewOutput(lines, { tail: 1 }, 100).text).toBe('b4');
    expect(viewOutput(lines, {}, 5)).toEqual({ text: 'b4', next: 12, cut: true });
    const gap = collected(3, 3, 'a1\n', 'zzzzzzzzzz', '\na2');
    expect(viewOutput(gap, { grep: (l) => l.includes('d') }, 100).text).toBe('');
  });
});
