import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { PinnedAddress } from './webhook-address';

/** How long a receiver has to answer (its status line and headers) before the attempt fails. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * POSTs `body` to `url`, connecting only to `pinned` (the address resolved and checked; TLS still
 * verifies the URL's name). Answers the response's status once its head arrives; the body is never
 * read (the connection is closed), redirects are not followed (a 3xx is a failed attempt). Throws
 * on no answer within WEBHOOK_TIMEOUT_MS, a refused connection, or `signal`.
 */
export function postWebhook(
  url: URL,
  pinned: PinnedAddress,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<number> {
  const lookup: LookupFunction = (_host, options, done) => {
    if (options.all) done(null, [pinned]);
    else done(null, pinned.address, pinned.family);
  };
  const send = url.protocol === 'https:' ? https.request : http.request;
  const timeout = AbortSignal.timeout(WEBHOOK_TIMEOUT_MS);
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup,
        // A connection of its own: no pooled socket to another address is reused.
        agent: false,
        signal: AbortSignal.any([signal, timeout]),
      },
      (res) => {
        resolve(res.statusCode ?? 0);
        res.destroy();
      },
    );
    req.on('error', (err) =>
      reject(timeout.aborted ? new Error(`no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s`) : err),
    );
    req.end(body);
  });
}
