import { PassThrough } from 'node:stream';
import { BodyChunks } from '../../src/llm/body-chunks';
import { ReadTicks } from '../../src/llm/read-ticks';

/** Resolves after `n` ticks of the event loop. */
const ticksLater = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A body the test writes to, as the HTTP client would push an answer's chunks. */
function body() {
  const stream = new PassThrough();
  return { stream, chunks: new BodyChunks(stream, new ReadTicks(1)) };
}

const text = (read: IteratorResult<Uint8Array>) => (read.done ? null : Buffer.from(read.value).toString());

describe('BodyChunks: one mechanism pauses a body, for its tick or for its reader', () => {
  it('after a delivery the body is paused until its tick, then hands over all that came meanwhile in one read', async () => {
    const { stream, chunks } = body();
    stream.write('a');
    expect(text(await chunks.next())).toBe('a');
    expect(stream.isPaused()).toBe(true);
    stream.write('b');
    stream.write('c');
    await Promise.resolve();
    expect(stream.readableLength).toBe(2); // waiting in the body, not handed over
    await ticksLater(2);
    expect(stream.readableLength).toBe(0);
    expect(text(await chunks.next())).toBe('bc');
  });

  it('at its tick, a body whose reader holds sixteen chunks unread stays paused until they are read', async () => {
    const { stream, chunks } = body();
    stream.write('first');
    expect(text(await chunks.next())).toBe('first');
    // While it waits for its tick: twenty chunks, each its own in the body's buffer.
    for (let i = 0; i < 20; i++) stream.write(String(i % 10));
    await ticksLater(5);
    // Its tick came long ago; sixteen were delivered, and the body stopped there.
    expect(stream.isPaused()).toBe(true);
    expect(stream.readableLength).toBe(4);
    expect(text(await chunks.next())).toBe('0123456789012345');
    await ticksLater(5);
    expect(text(await chunks.next())).toBe('6789');
  });

  it('once only the end is left (readNow), the body reads without waiting for ticks', async () => {
    const { stream, chunks } = body();
    stream.write('a');
    expect(text(await chunks.next())).toBe('a');
    expect(stream.isPaused()).toBe(true);
    chunks.readNow();
    stream.write('b');
    await Promise.resolve();
    expect(stream.isPaused()).toBe(false);
    expect(text(await chunks.next())).toBe('b');
    stream.end();
    expect(await chunks.next()).toEqual({ done: true, value: undefined });
  });
});
