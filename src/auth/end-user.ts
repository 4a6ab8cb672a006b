import { BadRequestException, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/** The header an application names the person a request is for with ("Budgets and usage": end users). */
export const END_USER_HEADER = 'x-end-user';

/** An acceptable end-user name: 1–200 printable ASCII characters (for a DTO's @Matches too). */
export const END_USER_PATTERN = /^[\x20-\x7e]{1,200}$/;

/** Whether `value` is an acceptable end-user name. */
export function isEndUserName(value: string): boolean {
  return END_USER_PATTERN.test(value);
}

/**
 * The end user the request is for (`X-End-User`), or null when it names none. A request with an end
 * user sees and changes only that end user's things; one without sees all of its key's.
 */
export function requestEndUser(request: FastifyRequest): string | null {
  const value = request.headers[END_USER_HEADER];
  if (value === undefined) return null;
  if (typeof value !== 'string' || !isEndUserName(value)) {
    throw new BadRequestException('X-End-User must be 1–200 printable ASCII characters');
  }
  return value;
}

/** `@EndUser() endUser: string | null` — the request's end user (see requestEndUser). */
export const EndUser = createParamDecorator((_data: unknown, ctx: ExecutionContext): string | null =>
  requestEndUser(ctx.switchToHttp().getRequest<FastifyRequest>()),
);

/**
 * The end user a new session belongs to: the request's (`X-End-User`) and the body's `endUser`
 * agree, either names it alone, or neither does (null). Disagreeing is a 400.
 */
export function sessionEndUser(header: string | null, body: string | undefined): string | null {
  if (body !== undefined && header !== null && body !== header) {
    throw new BadRequestException('endUser must be the end user X-End-User names');
  }
  return body ?? header;
}
