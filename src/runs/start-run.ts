import type { ResponseFormat } from '../common/response-format';
import type { RunReplay } from '../persistence/entities/run.entity';
import type { PromptInput } from '../files/prompt-parts';
import type { SessionOptions } from '../sessions/sessions.service';
import type { IdempotencyClaim } from '../store/idempotency-store.service';
import type { Delegation } from '../store/session-store.service';

/** A new prompt (in a new session unless sessionId), or the session's last prompt answered again. */
export type StartRun = (
  | {
      /** A string, or parts with files ("Attachments"). */
      prompt: PromptInput;
      sessionId?: string;
      /** Options of the session to create when there is no sessionId. */
      session?: SessionOptions;
      /** This run's responseFormat (unchecked yet), over the session's. */
      responseFormat?: ResponseFormat;
    }
  | { regenerate: true; sessionId: string; session?: undefined; responseFormat?: undefined }
) & {
  /** The request's Idempotency-Key: when an earlier request claimed it, its run is the answer. */
  idempotency?: Omit<IdempotencyClaim, 'owner'>;
  /** A child run's place in its tree: its new session is a child session (Delegations). */
  delegation?: Delegation;
  /** The request's W3C `traceparent`: the run's trace goes on under it. */
  traceParent?: string;
  /** What a prompt to a busy session does ("Messages while a run is active"); `reject` by default. */
  onActive?: OnActive;
  /**
   * The request's end user (X-End-User; null: none): a session it names must be that end user's
   * (else a 404), a session it creates is (the body's `endUser` may only agree), and the files its
   * prompt may use are theirs.
   */
  endUser?: string | null;
  /**
   * A replay ("Fork and replay"): the run answers from `of`'s record for its first `steps` steps
   * (null: all), on `model` (the replayed run's, or the one its live steps take).
   */
  replay?: RunReplay & { model: string };
};

/** A prompt to a busy session: refused (409), queued behind its run, or started once that run is cancelled. */
export type OnActive = 'reject' | 'enqueue' | 'interrupt';

export const ON_ACTIVE_VALUES: readonly OnActive[] = ['reject', 'enqueue', 'interrupt'];

/** The run a start request is answered with: the one it started, or the one its key's first request did. */
export interface StartedRun {
  runId: string;
  sessionId: string;
  /** True when an earlier request with the same Idempotency-Key started it. */
  replayed: boolean;
}
