import { UnauthorizedException } from '@nestjs/common';
import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { ApiKeyVerifier } from './api-key-verifier';
import { bearerToken } from './bearer-token';
import { isPublicRoute } from './public-routes';
import { LOCAL_OWNER, setRequestOwner } from './request-owner';
import { markStreamTokenRequest, STREAM_TOKEN_ROUTE, StreamTokens } from './stream-tokens';

/**
 * Decides who is calling before anything reads the body or looks for the resource, so a caller
 * without a valid key learns nothing (not even whether a route or id exists) from a 400 or 404.
 * Every route that is not public needs a key, including unknown paths. A run's events take a stream
 * token (`?token=`) instead, for that run only, and only when no Authorization header is sent.
 */
export function apiKeyAuthHook(apiKeys: ReadonlyMap<string, string> | null): onRequestHookHandler {
  if (apiKeys === null) {
    return (request, _reply, done) => {
      setRequestOwner(request, LOCAL_OWNER);
      done();
    };
  }
  const verifier = new ApiKeyVerifier(apiKeys);
  const streamTokens = new StreamTokens(apiKeys);
  return (request, _reply, done) => {
    if (isPublicRoute(request.routeOptions.url)) return done();
    const token = bearerToken(request.headers.authorization);
    if (token === null && request.headers.authorization === undefined) {
      const streamOwner = streamTokenOwner(request, streamTokens);
      if (streamOwner !== undefined) {
        if (streamOwner === null) return done(new UnauthorizedException('Invalid or foreign stream token'));
        setRequestOwner(request, streamOwner);
        markStreamTokenRequest(request);
        return done();
      }
    }
    if (token === null) {
      return done(new UnauthorizedException('Missing API key: send Authorization: Bearer <key>'));
    }
    const owner = verifier.nameFor(token);
    if (owner === null) return done(new UnauthorizedException('Invalid API key'));
    setRequestOwner(request, owner);
    done();
  };
}

/** The owner a `?token=` names on the events route: undefined when none is sent or on another route. */
function streamTokenOwner(request: FastifyRequest, tokens: StreamTokens): string | null | undefined {
  if (request.routeOptions.url !== STREAM_TOKEN_ROUTE) return undefined;
  const token = (request.query as Record<string, unknown> | undefined)?.token;
  if (typeof token !== 'string') return undefined;
  const runId = (request.params as Record<string, unknown> | undefined)?.id;
  return typeof runId === 'string' ? tokens.ownerFor(token, runId) : null;
}
