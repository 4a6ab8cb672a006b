import { Injectable } from '@nestjs/common';
import { DomainError, ErrorCode } from '../common/domain-error';
import {
  IdempotencyStore,
  type ClaimedEarlier,
  type IdempotencyClaim,
} from '../store/idempotency-store.service';
import { RunStore, type Queryable } from '../store/run-store.service';
import type { StartedRun } from './start-run';

/** A request's Idempotency-Key, without its owner (the key that sent the request). */
type StartKey = Omit<IdempotencyClaim, 'owner'>;

/**
 * Starts with an Idempotency-Key (decision 012): the first request claims the key in its run's
 * transaction; a request whose key an earlier request holds starts nothing and is answered with
 * that request's run — or a 422 when it was sent with another body.
 */
@Injectable()
export class StartReplays {
  constructor(
    private readonly store: RunStore,
    private readonly idempotency: IdempotencyStore,
  ) {}

  /**
   * Claims `key` for the run `runId` in the start's transaction `tx`; or, when an earlier request
   * holds it, that request's run (the caller then starts nothing, and its transaction stores nothing).
   */
  async claim(tx: Queryable, owner: string, key: StartKey, runId: string): Promise<StartedRun | null> {
    const held = await this.idempotency.claim(tx, { owner, ...key }, runId);
    return held ? replayOf(held) : null;
  }

  /**
   * The run an earlier request with `key` started, when the start was refused (`err`) because the
   * session is busy: a retry while the run its key started is still the session's active one is
   * answered before the busy session is refused. The key is read only then, so other starts pay
   * nothing for it.
   */
  async ofBusySession(owner: string, key: StartKey | undefined, err: unknown): Promise<StartedRun | null> {
    if (!key || !isSessionBusy(err)) return null;
    const held = await this.idempotency.held(this.store.queryable, { owner, ...key });
    return held ? replayOf(held) : null;
  }
}

function isSessionBusy(err: unknown): boolean {
  return err instanceof DomainError && err.code === ErrorCode.SessionBusy;
}

/** The answer to a request whose key an earlier request holds: that request's run, or a 422 for another body. */
export function replayOf(held: ClaimedEarlier): StartedRun {
  if (!held.sameRequest) {
    throw new DomainError(
      ErrorCode.IdempotencyKeyReused,
      'This Idempotency-Key was used with a different request body; use a new key for a new request',
      { runId: held.runId },
    );
  }
  return { runId: held.runId, sessionId: held.sessionId, replayed: true };
}
