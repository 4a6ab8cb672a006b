import { mapUpstreamError } from './upstream-error.mapper';

/**
 * The lifetime of one upstream request: its own AbortController, aborted by the caller's signal (the
 * loop's abort, or the stream guard's idle timeout) and by the provider when it has read enough.
 * Costs one listener per call.
 */
export class UpstreamCall {
  private readonly controller = new AbortController();

  constructor(private readonly caller: AbortSignal) {
    caller.addEventListener('abort', this.forward, { once: true });
  }

  /** The signal to give the request: aborted by the caller or close(). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * What a failure of the request or of its body means: the caller's own abort (its reason, not a
   * ModelError), or an upstream failure mapped to a ModelError.
   */
  failure(error: unknown): unknown {
    if (this.caller.aborted) return abortReason(this.caller);
    return mapUpstreamError(error);
  }

  /** Throws when the caller aborted (transport errors can end a body quietly). */
  throwIfStopped(): void {
    if (this.caller.aborted) throw abortReason(this.caller);
  }

  /** Ends the call; `abort` closes the request too (the body was not read to its end). */
  close(abort: boolean): void {
    this.caller.removeEventListener('abort', this.forward);
    if (abort && !this.controller.signal.aborted) this.controller.abort();
  }

  private readonly forward = (): void => {
    this.controller.abort(this.caller.reason);
  };
}

/** Whatever the signal was aborted with (a DOMException AbortError unless the caller chose a reason). */
export function abortReason(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  return reason ?? new DOMException('The model request was aborted', 'AbortError');
}
