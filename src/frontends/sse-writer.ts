import type { FastifyReply } from 'fastify';
import { once } from 'node:events';

/** A comment line after this much silence keeps proxies from cutting a stream whose run is busy in a tool. */
const PING_AFTER_MS = 15_000;

/**
 * Takes over the reply and writes `frames` (each already framed as SSE text) until they end or the
 * client goes away; `onClose` runs once either way.
 */
export async function writeSse(
  reply: FastifyReply,
  headers: Record<string, string>,
  frames: (signal: AbortSignal) => AsyncIterable<string>,
  onClose: () => void = () => {},
): Promise<void> {
  reply.hijack();
  const res = reply.raw;
  const closed = new AbortController();
  res.on('close', () => closed.abort());
  let lastWriteAt = Date.now();
  const pinger = setInterval(() => {
    if (Date.now() - lastWriteAt < PING_AFTER_MS || res.writableEnded) return;
    lastWriteAt = Date.now();
    res.write(': ping\n\n');
  }, 1000);
  pinger.unref();
  try {
    res.writeHead(200, {
      ...stringHeaders(reply.getHeaders()),
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    for await (const frame of frames(closed.signal)) {
      if (closed.signal.aborted) break;
      lastWriteAt = Date.now();
      if (!res.write(frame) && !closed.signal.aborted) {
        await once(res, 'drain', { signal: closed.signal }).catch(() => undefined);
      }
    }
  } finally {
    clearInterval(pinger);
    if (!res.writableEnded) res.end();
    closed.abort();
    onClose();
  }
}

function stringHeaders(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (typeof v === 'string') out[k] = v;
    else if (typeof v === 'number') out[k] = String(v);
  }
  return out;
}
