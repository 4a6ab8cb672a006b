import { UnauthorizedException } from '@nestjs/common';
import type { onRequestHookHandler } from 'fastify';
import { ApiKeyVerifier } from './api-key-verifier';
import { bearerToken } from './bearer-token';
import { isPublicRoute } from './public-routes';
import { LOCAL_OWNER, setRequestOwner } from './request-owner';

/**
 * Decides who is calling before anything reads the body or looks for the resource, so a caller
 * without a valid key learns nothing (not even whether a route or id exists) from a 400 or 404.
 * Every route that is not public needs a key, including unknown paths.
 */
export function apiKeyAuthHook(apiKeys: ReadonlyMap<string, string> | null): onRequestHookHandler {
  if (apiKeys === null) {
    return (request, _reply, done) => {
      setRequestOwner(request, LOCAL_OWNER);
      done();
    };
  }
  const verifier = new ApiKeyVerifier(apiKeys);
  return (request, _reply, done) => {
    if (isPublicRoute(request.routeOptions.url)) return done();
    const token = bearerToken(request.headers.authorization);
    if (token === null) {
      return done(new UnauthorizedException('Missing API key: send Authorization: Bearer <key>'));
    }
    const owner = verifier.nameFor(token);
    if (owner === null) return done(new UnauthorizedException('Invalid API key'));
    setRequestOwner(request, owner);
    done();
  };
}
