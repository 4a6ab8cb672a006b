/** A small client for the server's event streams, for tests: real HTTP through fetch, a spec-style SSE parser. */

export interface StreamEvent {
  id: number;
  event: string;
  data: Record<string, any>;
}

export interface OpenStream {
  status: number;
  headers: Headers;
  /** The next event, or null when the stream ended. */
  next(timeoutMs?: number): Promise<StreamEvent | null>;
  /** Reads events until one of `type` (inclusive), or the end. */
  until(type: string | ((e: StreamEvent) => boolean), timeoutMs?: number): Promise<StreamEvent[]>;
  /** Everything up to the end of the stream. */
  rest(timeoutMs?: number): Promise<StreamEvent[]>;
  /** Comment lines seen so far (`: ping`). */
  comments: string[];
  close(): void;
  /** A JSON error body when the server answered with an error instead of a stream. */
  errorBody: any;
}

export async function openStream(
  url: string,
  init: { method?: 'GET' | 'POST'; body?: unknown; headers?: Record<string, string> } = {},
): Promise<OpenStream> {
  const controller = new AbortController();
  const res = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...init.headers,
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: controller.signal,
  });
  const comments: string[] = [];
  const queue: StreamEvent[] = [];
  let ended = false;
  let errorBody: unknown = null;
  let wake = null as (() => void) | null;

  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    errorBody = await res.json().catch(() => null);
    ended = true;
  } else {
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let sep: number;
          while ((sep = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, sep);
            buffer = buffer.slice(sep + 2);
            const fields: Record<string, string> = {};
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) comments.push(line.slice(1).trim());
              else {
                const at = line.indexOf(':');
                const key = line.slice(0, at);
                fields[key] = (fields[key] ? `${fields[key]}\n` : '') + line.slice(at + 1).replace(/^ /, '');
              }
            }
            if (fields.data !== undefined) {
              queue.push({
                id: Number(fields.id),
                event: fields.event ?? 'message',
                data: JSON.parse(fields.data),
              });
            }
            wake?.();
          }
        }
      } catch {
        // aborted or reset
      } finally {
        ended = true;
        wake?.();
      }
    })();
  }

  const next = async (timeoutMs = 10_000): Promise<StreamEvent | null> => {
    const deadline = Date.now() + timeoutMs;
    while (queue.length === 0 && !ended) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, Math.min(left, 100));
      });
      wake = null;
    }
    return queue.shift() ?? null;
  };

  const stream: OpenStream = {
    status: res.status,
    headers: res.headers,
    comments,
    errorBody,
    next,
    async until(type, timeoutMs = 15_000) {
      const match = typeof type === 'string' ? (e: StreamEvent) => e.event === type : type;
      const out: StreamEvent[] = [];
      for (;;) {
        const e = await next(timeoutMs);
        if (!e) return out;
        out.push(e);
        if (match(e)) return out;
      }
    },
    async rest(timeoutMs = 15_000) {
      const out: StreamEvent[] = [];
      for (let e = await next(timeoutMs); e; e = await next(timeoutMs)) out.push(e);
      return out;
    },
    close: () => controller.abort(),
  };
  return stream;
}

/** JSON over fetch, for the non-streaming routes. */
export async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/**
 * The events' types with each run of consecutive `text` events as one `text`: how many pieces an
 * answer arrives in depends on timing (text that arrives between two writes is one event), its
 * order and content do not.
 */
export function eventKinds(events: readonly StreamEvent[]): string[] {
  return events.map((e) => e.event).filter((type, i, all) => type !== 'text' || all[i - 1] !== 'text');
}

/** The answer text of the events, however it was split. */
export function answerOf(events: readonly StreamEvent[]): string {
  return events
    .filter((e) => e.event === 'text')
    .map((e) => String(e.data.delta))
    .join('');
}
