import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { onRequestHookHandler } from 'fastify';

export const REQUEST_ID_HEADER = 'x-request-id';

// An incoming id is kept only if it is plain: it goes into every log line and back into a header.
const ACCEPTED_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Fastify's request id (and so pino-http's, which middie hands it): the caller's `x-request-id` when
 * it is a plain token, a new uuid otherwise, so client and server logs can be joined.
 */
export function requestIdFor(req: IncomingMessage): string {
  const incoming = req.headers[REQUEST_ID_HEADER];
  return typeof incoming === 'string' && ACCEPTED_ID.test(incoming) ? incoming : randomUUID();
}

/** Echoes the id on every response, on the raw response so streams that hijack the reply carry it too. */
export function echoRequestIdHook(): onRequestHookHandler {
  return (request, reply, done) => {
    reply.raw.setHeader(REQUEST_ID_HEADER, request.id);
    done();
  };
}
