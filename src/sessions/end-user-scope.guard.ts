import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { requestEndUser } from '../auth/end-user';
import { requestOwner } from '../auth/request-owner';
import { DomainError, ErrorCode } from '../common/domain-error';
import { SessionStore } from '../store/session-store.service';
import { sessionNotFound } from './sessions.service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * What a request with X-End-User may reach of its key's sessions and runs: only its end user's
 * ("Budgets and usage": end users). Every route under `/v1/sessions/:id` and `/v1/runs/:id` — reads,
 * prompts, approvals, results, cancels, deletes, stream tokens, compactions, forks, replays — is a
 * 404 for a session (or a run of a session) of another end user, or of none, exactly as for one that
 * does not exist. One check before any handler, so no route can forget it; a request without the
 * header sees all of its key's, and pays nothing. (Starts that name a session in their body, chat
 * and thread ids, lists and usage filter by the end user where they read.)
 */
@Injectable()
export class EndUserScope implements CanActivate {
  constructor(private readonly sessions: SessionStore) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http') return true;
    const request = ctx.switchToHttp().getRequest<FastifyRequest>();
    const endUser = requestEndUser(request);
    if (endUser === null) return true;
    const route = request.routeOptions.url ?? '';
    const id = (request.params as Record<string, string | undefined> | undefined)?.id;
    // A malformed id is the route's own 404 (its pipe's).
    if (id === undefined || !UUID.test(id)) return true;
    if (route.startsWith('/v1/sessions/:id')) {
      const theirs = await this.sessions.endUserOf({ sessionId: id }, requestOwner(request));
      if (theirs !== endUser) throw sessionNotFound(id);
    } else if (route.startsWith('/v1/runs/:id')) {
      const theirs = await this.sessions.endUserOf({ runId: id }, requestOwner(request));
      if (theirs !== endUser) throw new DomainError(ErrorCode.RunNotFound, `Run ${id} not found`);
    }
    return true;
  }
}
