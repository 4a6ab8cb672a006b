import type { FastifyRequest } from 'fastify';

/** The owner of everything created while API_KEYS is unset. */
export const LOCAL_OWNER = 'local';

// Keyed by the raw request: it is the one object every layer (hooks, guards, handlers) shares.
const owners = new WeakMap<FastifyRequest['raw'], string>();

export function setRequestOwner(request: FastifyRequest, owner: string): void {
  owners.set(request.raw, owner);
}

/** The key name the auth hook accepted for this request. */
export function requestOwner(request: FastifyRequest): string {
  const owner = owners.get(request.raw);
  // Reaching a handler without an owner means the auth hook was not installed: fail loudly, never open.
  if (owner === undefined)
    throw new Error('No authenticated owner on this request: is the auth hook installed?');
  return owner;
}
