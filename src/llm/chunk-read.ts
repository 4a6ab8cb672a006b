import type { SseParser } from './sse-parser';

/** What one read of a streamed answer's body did. */
export interface ChunkRead {
  /** The body ended (and the parser has had its end). */
  atEnd: boolean;
  /** What the chunk's events failed with, if they did; the events made before it are the model's still. */
  failed: Error | undefined;
}

/**
 * Reads the next chunk of an answer's body into its parser: every provider's read of its wire. A
 * failed read is the transport's, thrown as `readFailure` makes it. A failure of what the chunk held
 * is returned, not thrown, so the provider first yields the events made before it, then throws it.
 */
export async function readChunk(
  chunks: AsyncIterator<Uint8Array>,
  parser: SseParser,
  readFailure: (error: unknown) => unknown,
  alive: () => void,
): Promise<ChunkRead> {
  let read: IteratorResult<Uint8Array>;
  try {
    read = await chunks.next();
  } catch (error) {
    throw readFailure(error);
  }
  alive();
  const atEnd = read.done === true;
  try {
    if (read.done) parser.end();
    else parser.push(read.value);
    return { atEnd, failed: undefined };
  } catch (error) {
    return { atEnd, failed: error instanceof Error ? error : new Error(String(error)) };
  }
}
