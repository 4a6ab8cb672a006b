import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';

/** The routes whose body is a file, read by their handler as a stream (not JSON, not BODY_LIMIT_BYTES). */
export const RAW_UPLOAD_ROUTES: ReadonlySet<string> = new Set(['/v1/files']);

/**
 * The internal type a raw upload's body is parsed as. A file is sent with its own Content-Type —
 * `application/json` or `text/plain` among them, which the JSON-only parsers would otherwise read
 * (and bound by BODY_LIMIT_BYTES) — so on the upload routes that type is set aside, and the body
 * reaches the handler as the request's stream, whatever it was.
 */
const RAW_UPLOAD_TYPE = 'application/x-loopwright-raw-upload';

const declaredTypes = new WeakMap<FastifyRequest, string | null>();

/** Whether `request` is a POST to a raw upload route. */
export function isRawUploadRequest(request: FastifyRequest): boolean {
  return request.method === 'POST' && RAW_UPLOAD_ROUTES.has(request.routeOptions.url ?? '');
}

function bareType(header: string | undefined): string | null {
  const type = header?.split(';', 1)[0].trim().toLowerCase();
  return type ? type : null;
}

/**
 * On the upload routes: a multipart body goes to the multipart parser; any other keeps its type as
 * the declared type of the file (declaredUploadType) and is handed over as a stream.
 */
export function rawUploadHook(): onRequestHookHandler {
  return (request, _reply, done) => {
    if (!isRawUploadRequest(request)) return done();
    const type = request.headers['content-type'];
    if (bareType(type) === 'multipart/form-data') return done();
    declaredTypes.set(request, bareType(type));
    request.headers['content-type'] = RAW_UPLOAD_TYPE;
    done();
  };
}

/** The parser of RAW_UPLOAD_TYPE: the body is the request's payload stream, unread. */
export function addRawUploadParser(fastify: FastifyInstance): void {
  fastify.addContentTypeParser(RAW_UPLOAD_TYPE, (_request, payload, done) => done(null, payload));
}

/** A raw upload's body and its declared type; null for a request that is not one (multipart). */
export function rawUpload(
  request: FastifyRequest,
): { declaredType: string | null; body: Readable | undefined } | null {
  if (!declaredTypes.has(request)) return null;
  return { declaredType: declaredTypes.get(request) ?? null, body: request.body as Readable | undefined };
}
