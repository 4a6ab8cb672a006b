import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type RequestOptions,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';

/** Streamed answers' bodies, left as Node streams for the provider to read (see rawBody). */
const rawBodies = new WeakMap<Response, IncomingMessage>();

/**
 * The body of a streamed answer of `nodeFetch` (2xx, `text/event-stream`), as the socket delivers
 * it: read this instead of `response.body` (which is null) — no web stream between the socket and
 * the SSE parser. Undefined for any other answer, whose body is `response.body` as usual.
 */
export function rawBody(response: Response): IncomingMessage | undefined {
  return rawBodies.get(response);
}

/**
 * The `fetch` the OpenAI SDK sends its requests with: node:http on keep-alive agents instead of
 * undici. The SDK keeps everything it does (headers, auth, retries, timeouts, errors); what changes
 * is the streamed body, which reaches the provider as Buffers from the socket rather than through
 * fetch's web streams — at a model's 20–100 chunks a second per run, the dearest part of a stream
 * (issue 29, `node bench/run.mjs --only=capacity`, two interleaved pairs: server CPU per run 25.4
 * and 26.8 ms read raw through BodyChunks, 28.2 and 29.0 ms through the web stream).
 * Any other answer (an error, a non-streaming call's JSON) has its body as a web stream, as fetch
 * gives it, for the SDK to read. Bodies are asked for
 * uncompressed (`accept-encoding: identity`), as SSE is streamed anyway.
 */
export function createNodeFetch(): typeof fetch {
  const agents = {
    'http:': new HttpAgent({ keepAlive: true }),
    'https:': new HttpsAgent({ keepAlive: true }),
  };
  // Async, so that a bad URL or header rejects like fetch instead of throwing.
  return async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const send = url.protocol === 'https:' ? httpsRequest : url.protocol === 'http:' ? httpRequest : null;
    if (send === null) throw new TypeError(`unsupported protocol ${url.protocol}`);
    const body = init.body ?? undefined;
    if (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array)) {
      throw new TypeError('nodeFetch sends string and byte bodies only');
    }
    const signal = init.signal ?? null;
    if (signal?.aborted) throw abortError();
    const headers: Record<string, string> = { 'accept-encoding': 'identity' };
    new Headers(init.headers).forEach((value, name) => (headers[name] = value));
    const agent = agents[url.protocol as keyof typeof agents];
    const { request, answer } = sendHead(send, url, { method: init.method ?? 'GET', headers, agent }, signal);
    // Written here: sendHead's listeners live as long as the answer streams, and anything they could
    // reach (the body is the whole conversation, ~10 KB and more a call) would live as long.
    request.end(body);
    return answer;
  };
}

type Send = (url: URL, options: RequestOptions, onAnswer: (answer: IncomingMessage) => void) => ClientRequest;

/** Opens the request and listens for its answer, its abort and its errors; the caller writes the body. */
function sendHead(
  send: Send,
  url: URL,
  options: RequestOptions,
  signal: AbortSignal | null,
): { request: ClientRequest; answer: Promise<Response> } {
  let request!: ClientRequest;
  const answer = new Promise<Response>((resolve, reject) => {
    let answered: IncomingMessage | null = null;
    request = send(url, options, (answer) => {
      answered = answer;
      // Once the body has ended the socket serves another request: an abort must not reach it.
      answer.once('end', stopListening).once('close', stopListening);
      try {
        resolve(toResponse(answer));
      } catch (error) {
        answer.destroy();
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
    // Destroyed without an error: the socket may have no listener left once the body has arrived.
    const onAbort = () => {
      reject(abortError());
      answered?.destroy();
      request.destroy();
    };
    const stopListening = () => signal?.removeEventListener('abort', onAbort);
    signal?.addEventListener('abort', onAbort, { once: true });
    // Also after the answer began: a request's late errors reach its body's reader, not the process.
    request.on('error', (error) => {
      stopListening();
      reject(error);
    });
  });
  return { request, answer };
}

function toResponse(answer: IncomingMessage): Response {
  const status = answer.statusCode ?? 0;
  const headers = new Headers();
  const raw = answer.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  // Only a stream of events is read raw; any other answer (an error, a JSON result) is fetch's as usual.
  const streamed = status >= 200 && status < 300 && EVENT_STREAM.test(headers.get('content-type') ?? '');
  const body =
    streamed || NULL_BODY_STATUSES.has(status)
      ? null
      : (Readable.toWeb(answer) as ReadableStream<Uint8Array>);
  const response = new Response(body, { status, statusText: answer.statusMessage, headers });
  if (streamed) {
    rawBodies.set(response, answer);
    // An abort after the reader stopped destroys the body with an error nobody is left to read.
    answer.on('error', ignore);
  }
  return response;
}

/** A Server-Sent Events answer, what a streamed model call gets. */
const EVENT_STREAM = /^\s*text\/event-stream\s*(;|$)/i;

/** Statuses whose Response must have no body. */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

function ignore(): void {}

/** What fetch rejects with when its signal aborts (the SDK tells an abort by this name). */
function abortError(): DOMException {
  return new DOMException('This operation was aborted', 'AbortError');
}
