import { PassThrough } from 'node:stream';
import { BodyChunks } from '../../src/llm/body-chunks';

/** A body the test writes to, as the HTTP client would push an answer's chunks. */
function body() {
  const stream = new PassThrough();
  return { stream, chunks: new BodyChunks(stream) };
}

const text = (read: IteratorResult<Uint8Array>) => (read.done ? null : Buffer.from(read.value).toString());

describe('BodyChunks: an answer body read off its data events', () => {
  it('hands over everything that came since the last read as one chunk', async () => {
    const { stream, chunks } = body();
    stream.write('a');
    expect(text(await chunks.next())).toBe('a');
    stream.write('b');
    stream.write('c');
    await new Promise((resolve) => setImmediate(resolve));
    expect(text(await chunks.next())).toBe('bc');
    expect(stream.isPaused()).toBe(false);
  });

  it('pauses the body while its reader holds sixteen chunks unread, and resumes it once they are read', async () => {
    const { stream, chunks } = body();
    for (let i = 0; i < 20; i++) stream.write(String(i % 10));
    await new Promise((resolve) => setImmediate(resolve));
    // Sixteen were delivered, and the body stopped there: the rest waits in its buffer.
    expect(stream.isPaused()).toBe(true);
    expect(stream.readableLength).toBe(4);
    expect(text(await chunks.next())).toBe('0123456789012345');
    expect(stream.isPaused()).toBe(false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(text(await chunks.next())).toBe('6789');
  });

  it('ends with the body, and fails a read when the body closes before its end', async () => {
    const ended = body();
    ended.stream.end('last');
    expect(text(await ended.chunks.next())).toBe('last');
    expect(await ended.chunks.next()).toEqual({ done: true, value: undefined });

    const cut = body();
    cut.stream.write('half');
    expect(text(await cut.chunks.next())).toBe('half');
    cut.stream.destroy();
    await expect(cut.chunks.next()).rejects.toThrow('closed the body before its end');
  });
});
