import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { LOCAL_OWNER } from './request-owner';

/** How long a stream token still reads its run after the run has ended. */
export const STREAM_TOKEN_TTL_MS = 10 * 60_000;
/** The one route a stream token opens (Fastify's pattern), with the run id in `:id`. */
export const STREAM_TOKEN_ROUTE = '/v1/runs/:id/events';
const PREFIX = 'lwst_';

/**
 * Read-only tokens for one run's events, for a browser's EventSource, which cannot send an
 * Authorization header. A token is an HMAC of the run id under a key derived from the owner's API
 * key secret: any replica with the same API_KEYS checks it without a lookup, it names neither the
 * key nor its owner, and it dies with the key. When it expires depends on the run (10 minutes
 * after it ends), so the route checks that against the stored run.
 */
export class StreamTokens {
  private readonly keys: readonly { owner: string; key: Buffer }[];

  /** `apiKeys` maps secrets to key names; null when auth is off (then every token is the local owner's). */
  constructor(apiKeys: ReadonlyMap<string, string> | null) {
    const secrets = apiKeys ?? new Map([['', LOCAL_OWNER]]);
    this.keys = [...secrets].map(([secret, owner]) => ({
      owner,
      key: createHmac('sha256', secret).update('loopwright stream token v1').digest(),
    }));
  }

  issue(owner: string, runId: string): string {
    const entry = this.keys.find((k) => k.owner === owner);
    if (entry === undefined) throw new Error(`No API key named ${owner}`);
    return PREFIX + mac(entry.key, runId).toString('base64url');
  }

  /** The owner the token was issued to for this run, or null. Every key is tried, in constant time each. */
  ownerFor(token: string, runId: string): string | null {
    if (!token.startsWith(PREFIX)) return null;
    const presented = Buffer.from(token.slice(PREFIX.length), 'base64url');
    let match: string | null = null;
    for (const { owner, key } of this.keys) {
      const expected = mac(key, runId);
      if (presented.length === expected.length && timingSafeEqual(presented, expected) && match === null) {
        match = owner;
      }
    }
    return match;
  }
}

/** When a token for a run that ended at `finishedAt` stops working; null while the run goes on. */
export function streamTokenExpiry(finishedAt: Date | null): Date | null {
  return finishedAt === null ? null : new Date(finishedAt.getTime() + STREAM_TOKEN_TTL_MS);
}

// Requests the auth hook let in on a stream token rather than an API key.
const viaToken = new WeakSet<FastifyRequest['raw']>();

export function markStreamTokenRequest(request: FastifyRequest): void {
  viaToken.add(request.raw);
}

export function isStreamTokenRequest(request: FastifyRequest): boolean {
  return viaToken.has(request.raw);
}

function mac(key: Buffer, runId: string): Buffer {
  return createHmac('sha256', key).update(runId.toLowerCase()).digest();
}
