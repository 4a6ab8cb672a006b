import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { requestOwner } from './request-owner';

/**
 * The name of the API key the request was made with (`local` when auth is off). Sessions and runs
 * belong to it: `@Owner() owner: string`.
 */
export const Owner = createParamDecorator((_data: unknown, ctx: ExecutionContext): string =>
  requestOwner(ctx.switchToHttp().getRequest<FastifyRequest>()),
);
