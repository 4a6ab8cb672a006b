import { Injectable } from '@nestjs/common';
import type { Queryable } from './store-sql';

/** How long a key keeps answering with its run. */
const KEY_LIFETIME = `interval '24 hours'`;

/** A key sent with a request that starts a run: whose, for which endpoint, and the request's body. */
export interface IdempotencyClaim {
  owner: string;
  /** `chat`, or `messages:<session id>`. */
  scope: string;
  key: string;
  request: unknown;
}

/** The run an earlier request with the same key started. */
export interface ClaimedEarlier {
  runId: string;
  sessionId: string;
  /** Whether that request had the same body (as parsed JSON). */
  sameRequest: boolean;
}

/** The idempotency_keys table (see IdempotencyKeyEntity). */
@Injectable()
export class IdempotencyStore {
  /**
   * Claims the key for `runId`, inside the run's start transaction: null when this request is the
   * first within 24 hours (the key is now its own, and goes if the transaction rolls back).
   * Otherwise the run of the request that holds it; a request holding it but not yet committed is
   * waited for (the key's row is locked by its insert).
   */
  async claim(tx: Queryable, claim: IdempotencyClaim, runId: string): Promise<ClaimedEarlier | null> {
    const request = JSON.stringify(claim.request);
    const claimed: unknown[] = await tx.query(
      `WITH pruned AS (
         DELETE FROM idempotency_keys
          WHERE owner = $1 AND created_at < now() - ${KEY_LIFETIME} AND (scope, key) <> ($2, $3)
       )
       INSERT INTO idempotency_keys (owner, scope, key, request, run_id) VALUES ($1, $2, $3, $4::jsonb, $5)
       ON CONFLICT (owner, scope, key) DO UPDATE
          SET request = excluded.request, run_id = excluded.run_id, created_at = now()
        WHERE idempotency_keys.created_at < now() - ${KEY_LIFETIME}
       RETURNING 1`,
      [claim.owner, claim.scope, claim.key, request, runId],
    );
    if (claimed.length > 0) return null;
    // A new statement: it sees the holder's commit that the insert above waited for.
    const held = await this.held(tx, claim);
    if (!held) throw new Error(`Idempotency key ${claim.key} neither claimed nor held`);
    return held;
  }

  /** The run of the request that holds the key (within its 24 hours), without claiming it; null when none does. */
  async held(q: Queryable, claim: IdempotencyClaim): Promise<ClaimedEarlier | null> {
    const rows: ClaimedEarlier[] = await q.query(
      `SELECT k.run_id AS "runId", r.session_id AS "sessionId", k.request = $4::jsonb AS "sameRequest"
         FROM idempotency_keys k JOIN runs r ON r.id = k.run_id
        WHERE k.owner = $1 AND k.scope = $2 AND k.key = $3 AND k.created_at >= now() - ${KEY_LIFETIME}`,
      [claim.owner, claim.scope, claim.key, JSON.stringify(claim.request)],
    );
    return rows[0] ?? null;
  }
}
