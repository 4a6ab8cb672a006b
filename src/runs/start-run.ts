import type { SessionOptions } from '../sessions/sessions.service';
import type { IdempotencyClaim } from '../store/idempotency-store.service';
import type { Delegation } from '../store/session-store.service';

/** A new prompt (in a new session unless sessionId), or the session's last prompt answered again. */
export type StartRun = (
  | {
      prompt: string;
      sessionId?: string;
      /** Options of the session to create when there is no sessionId. */
      session?: SessionOptions;
    }
  | { regenerate: true; sessionId: string; session?: undefined }
) & {
  /** The request's Idempotency-Key: when an earlier request claimed it, its run is the answer. */
  idempotency?: Omit<IdempotencyClaim, 'owner'>;
  /** A child run's place in its tree: its new session is a child session (Delegations). */
  delegation?: Delegation;
  /** The request's W3C `traceparent`: the run's trace goes on under it. */
  traceParent?: string;
};

/** The run a start request is answered with: the one it started, or the one its key's first request did. */
export interface StartedRun {
  runId: string;
  sessionId: string;
  /** True when an earlier request with the same Idempotency-Key started it. */
  replayed: boolean;
}
