import { UnsupportedMediaTypeException } from '@nestjs/common';
import type { onRequestHookHandler } from 'fastify';
import { isRawUploadRequest } from './raw-upload';

/**
 * Bodies are JSON or nothing. Checked before any parser runs, so no other type is ever parsed
 * (Nest registers a form parser of its own at init), and a cross-site page cannot post to the API
 * with the "simple" types a browser sends without a CORS preflight. A request without a body (a
 * cancel) needs no type. The upload routes (RAW_UPLOAD_ROUTES) take a file of any type instead.
 */
export function jsonOnlyHook(): onRequestHookHandler {
  return (request, _reply, done) => {
    if (request.is404 || !hasBody(request.headers) || isRawUploadRequest(request)) return done();
    const type = request.headers['content-type'];
    if (mediaType(type) === 'application/json') return done();
    const got = type === undefined ? 'no Content-Type' : JSON.stringify(type.slice(0, 100));
    done(
      new UnsupportedMediaTypeException(
        `Unsupported Media Type: request bodies must be application/json (got ${got})`,
      ),
    );
  };
}

function hasBody(headers: { 'content-length'?: string; 'transfer-encoding'?: string }): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && length.trim() !== '0';
}

function mediaType(header: string | undefined): string | undefined {
  return header?.split(';', 1)[0].trim().toLowerCase();
}
