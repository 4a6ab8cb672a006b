import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * Helmet's defaults, which also suit the documentation UI (its scripts are files under /docs, its
 * styles inline). `upgrade-insecure-requests` is dropped: the server speaks plain HTTP, and a
 * browser told to upgrade would fetch the UI's files over an https:// that does not exist.
 */
const HELMET_OPTIONS: Readonly<HelmetOptions> = {
  contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
};

/**
 * Helmet's headers for HELMET_OPTIONS. They depend on nothing in the request, so helmet works them
 * out once, here, instead of once per request (as @fastify/helmet does: a tenth of a millisecond
 * of every request's CPU, the policy parsed anew each time).
 */
const SECURITY_HEADERS: readonly (readonly [string, string])[] = helmetHeaders(HELMET_OPTIONS);

/**
 * Sets SECURITY_HEADERS on every answer, errors and 404s included. They go on the raw response, so
 * the event streams, written to it directly, carry them too; a route may still replace one (the
 * playground sets its own Content-Security-Policy).
 */
export function addSecurityHeaders(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (_request, reply, done) => {
    const raw = reply.raw;
    for (const [name, value] of SECURITY_HEADERS) raw.setHeader(name, value);
    done();
  });
}

/** What helmet's middleware sets on a response, recorded from one call. */
function helmetHeaders(options: Readonly<HelmetOptions>): [string, string][] {
  const headers = new Map<string, string>();
  const response = {
    setHeader(name: string, value: string | number | readonly string[]): void {
      headers.set(name.toLowerCase(), String(value));
    },
    removeHeader(name: string): void {
      headers.delete(name.toLowerCase());
    },
  };
  // Helmet throws on options it refuses (and so does the server, at start).
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, () => undefined);
  return [...headers];
}
