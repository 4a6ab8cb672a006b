import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { requestOwner } from './request-owner';
import { isStreamTokenRequest } from './stream-tokens';

/**
 * The name of the API key the request was made with (`local` when auth is off). Sessions and runs
 * belong to it: `@Owner() owner: string`.
 */
export const Owner = createParamDecorator((_data: unknown, ctx: ExecutionContext): string =>
  requestOwner(ctx.switchToHttp().getRequest<FastifyRequest>()),
);

/** Whether the request was let in on a stream token (`?token=`) rather than an API key. */
export const ViaStreamToken = createParamDecorator((_data: unknown, ctx: ExecutionContext): boolean =>
  isStreamTokenRequest(ctx.switchToHttp().getRequest<FastifyRequest>()),
);
