import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { ServerResponse } from 'node:http';
import { once } from 'node:events';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { DomainError, ErrorCode } from '../common/domain-error';
import { Metrics } from '../metrics/metrics.service';
import type { EventRecord } from '../store/run-store.service';

/**
 * Why a stream's own signal aborts when it ends: one shared reason, because `abort()` without one
 * makes a DOMException, with its stack, for every stream that ends.
 */
export const STREAM_ENDED = new Error('the stream ended');

interface OpenStream {
  res: ServerResponse;
  lastWriteAt: number;
}

/**
 * Writes run events as Server-Sent Events: `id:`/`event:`/`data:` framing, a `: ping` comment
 * whenever 15 s pass without an event, and backpressure (a slow client is read from the event log
 * at its own pace instead of being buffered in memory).
 */
@Injectable()
export class EventStreams implements OnModuleDestroy {
  private readonly open = new Set<OpenStream>();
  private readonly pinger: NodeJS.Timeout;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    this.pinger = setInterval(() => this.ping(), 1000);
    this.pinger.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.pinger);
  }

  /** Refuses a new stream when the server holds as many as it may (before any run is started for it). */
  assertCapacity(): void {
    if (this.open.size >= this.config.maxOpenStreams) {
      throw new DomainError(
        ErrorCode.ServerBusy,
        'The server has as many open streams as it may; retry shortly',
        {},
        1,
      );
    }
  }

  /**
   * Takes over the reply and writes `events` until they end or the client goes away. `onClose` runs
   * once either way.
   */
  write(
    reply: FastifyReply,
    headers: Record<string, string>,
    events: (signal: AbortSignal) => AsyncIterable<EventRecord[]>,
    onClose: () => void = () => {},
  ): Promise<void> {
    return this.writeFrames(
      reply,
      headers,
      async function* (signal) {
        for await (const batch of events(signal)) {
          let chunk = '';
          for (const e of batch) chunk += `id: ${e.seq}\nevent: ${e.type}\ndata: ${e.data}\n\n`;
          yield chunk;
        }
      },
      onClose,
    );
  }

  /**
   * Like `write`, for streams already framed as SSE text (the frontend protocols): the same capacity,
   * pings, backpressure and metrics for every stream the server holds.
   */
  async writeFrames(
    reply: FastifyReply,
    headers: Record<string, string>,
    frames: (signal: AbortSignal) => AsyncIterable<string>,
    onClose: () => void = () => {},
  ): Promise<void> {
    reply.hijack();
    const res = reply.raw;
    const closed = new AbortController();
    res.on('close', () => closed.abort(STREAM_ENDED));
    const stream: OpenStream = { res, lastWriteAt: Date.now() };
    this.open.add(stream);
    this.metrics.openStreams.inc();
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
      for await (const chunk of frames(closed.signal)) {
        if (closed.signal.aborted) break;
        stream.lastWriteAt = Date.now();
        if (!res.write(chunk) && !closed.signal.aborted) {
          await once(res, 'drain', { signal: closed.signal }).catch(() => undefined);
        }
        if (closed.signal.aborted) break;
      }
    } finally {
      this.open.delete(stream);
      this.metrics.openStreams.dec();
      if (!res.writableEnded) res.end();
      closed.abort(STREAM_ENDED);
      onClose();
    }
  }

  private ping(): void {
    const now = Date.now();
    for (const s of this.open) {
      if (now - s.lastWriteAt >= this.config.ssePingMs && !s.res.writableEnded) {
        s.lastWriteAt = now;
        s.res.write(': ping\n\n');
      }
    }
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
