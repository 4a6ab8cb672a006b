import { APIError } from 'openai';
import { BodyChunks } from '../../body-chunks';
import { ModelError } from '../../model-provider';
import { rawBody } from '../../node-fetch';
import type { UpstreamCall } from '../../upstream-call';

function noop(): void {}

/**
 * The chunks of a streamed answer's body: raw off the socket when nodeFetch sent the request (see
 * rawBody), else fetch's web stream. Read with SseParser, which bounds what one line or event holds.
 */
export function bodyChunksOf(response: Response): AsyncIterator<Uint8Array> {
  const raw = rawBody(response);
  if (raw !== undefined) return new BodyChunks(raw);
  const body: AsyncIterable<Uint8Array> | null = response.body;
  if (body === null) {
    throw new ModelError('UPSTREAM_MALFORMED', 'the model upstream answered without a body', false);
  }
  return body[Symbol.asyncIterator]();
}

/**
 * Reads a body to its end, ignoring what it holds; false when it did not end within `ms` or failed.
 * Reading the end of an answer already complete lets the connection serve the next call.
 */
export async function bodyEnd(chunks: AsyncIterator<Uint8Array>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  try {
    for (;;) {
      const next = chunks.next();
      // Left pending when late: the request is then closed, which rejects it — handled here.
      next.catch(noop);
      const read = await Promise.race([next, late]);
      if (read === 'late') return false;
      if (read.done) return true;
    }
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** What a chunk failed with, to throw: the upstream's failures as ModelErrors; a bug of ours as it is. */
export function upstreamFailure(failed: unknown, call: UpstreamCall): unknown {
  return failed instanceof ModelError || failed instanceof APIError ? call.failure(failed) : failed;
}
