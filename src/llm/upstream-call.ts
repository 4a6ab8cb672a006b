import { ModelError } from './model-provider';
import { mapUpstreamError } from './upstream-error.mapper';

/**
 * The lifetime of one upstream request: its own AbortController (the caller's signal aborts it, and
 * so do the idle timeout and the provider when it has read enough), and the idle clock. Costs one
 * listener and one timer per call; the timer is re-armed only when it fires, not per chunk.
 */
export class UpstreamCall {
  private readonly controller = new AbortController();
  private lastActivity = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private timedOut = false;

  constructor(
    private readonly caller: AbortSignal,
    private readonly idleTimeoutMs: number,
  ) {
    caller.addEventListener('abort', this.forward, { once: true });
    this.arm(idleTimeoutMs);
  }

  /** The signal to give the request: aborted by the caller, the idle timeout or close(). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Something arrived from the upstream. */
  touch(): void {
    this.lastActivity = Date.now();
  }

  /**
   * What a failure of the request or of its body means: the caller's own abort (its reason, not a
   * ModelError), the idle timeout, or an upstream failure mapped to a ModelError.
   */
  failure(error: unknown): unknown {
    if (this.caller.aborted) return abortReason(this.caller);
    if (this.timedOut) return this.timeoutError();
    return mapUpstreamError(error);
  }

  /** Throws when the caller aborted or the upstream went silent (transport errors can end a body quietly). */
  throwIfStopped(): void {
    if (this.caller.aborted) throw abortReason(this.caller);
    if (this.timedOut) throw this.timeoutError();
  }

  /** Ends the call; `abort` closes the request too (the body was not read to its end). */
  close(abort: boolean): void {
    clearTimeout(this.timer);
    this.caller.removeEventListener('abort', this.forward);
    if (abort && !this.controller.signal.aborted) this.controller.abort();
  }

  private readonly forward = (): void => {
    this.controller.abort(this.caller.reason);
  };

  private arm(ms: number): void {
    this.timer = setTimeout(this.check, ms);
    this.timer.unref();
  }

  private readonly check = (): void => {
    const silent = Date.now() - this.lastActivity;
    if (silent < this.idleTimeoutMs) {
      this.arm(this.idleTimeoutMs - silent);
      return;
    }
    this.timedOut = true;
    this.controller.abort(this.timeoutError());
  };

  private timeoutError(): ModelError {
    const seconds = Math.round(this.idleTimeoutMs / 1000);
    return new ModelError('UPSTREAM_TIMEOUT', `The model sent nothing for ${seconds} s.`, true);
  }
}

/** Whatever the signal was aborted with (a DOMException AbortError unless the caller chose a reason). */
export function abortReason(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  return reason ?? new DOMException('The model request was aborted', 'AbortError');
}
