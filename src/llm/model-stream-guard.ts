import { ModelError, type ModelStreamEvent } from './model-provider';
import { utf8Prefix } from './stream-budget';
import { abortReason } from './upstream-call';

export interface StreamGuardLimits {
  /** LLM_IDLE_TIMEOUT_MS: the longest a stream may stay silent (before its first event too). */
  idleTimeoutMs: number;
  /** ANSWER_MAX_BYTES: the most answer text (UTF-8 bytes of `text` deltas) one call may stream. */
  answerMaxBytes: number;
}

/**
 * One provider's stream held to what every model call owes the server, whatever its provider:
 * - silence: nothing for `idleTimeoutMs` aborts the provider's request (the signal it was given)
 *   and fails the call as a retryable UPSTREAM_TIMEOUT;
 * - the answer budget: the text delta that crosses `answerMaxBytes` is cut at a character
 *   boundary, the provider's stream is closed (which closes its request), and the call finishes
 *   with `length` and no tool calls (a cut answer's calls cannot be trusted to be whole). Its usage
 *   says 0 + 0: the upstream's report, sent at its end, never comes — the call is counted all the
 *   same, estimated from what was sent and streamed (agent/model-call-recorder.service.ts).
 * `open` starts the provider's stream with the signal to honour.
 */
export async function* guardModelStream(
  open: (signal: AbortSignal, alive: () => void) => AsyncIterable<ModelStreamEvent>,
  limits: StreamGuardLimits,
  signal: AbortSignal,
): AsyncGenerator<ModelStreamEvent, void, undefined> {
  const idle = new IdleClock(limits.idleTimeoutMs);
  // The provider stops on the caller's abort or on silence, whichever comes first.
  const providerSignal = AbortSignal.any([signal, idle.signal]);
  let answerBytesLeft = limits.answerMaxBytes;
  let events: AsyncIterator<ModelStreamEvent> | undefined;
  try {
    events = open(providerSignal, idle.touch)[Symbol.asyncIterator]();
    for (;;) {
      let next: IteratorResult<ModelStreamEvent>;
      try {
        next = await events.next();
      } catch (error) {
        // The provider saw its signal abort: the caller's abort or the idle timeout, not its failure.
        if (signal.aborted) throw abortReason(signal);
        if (idle.signal.aborted) throw idle.timeoutError();
        throw error;
      }
      idle.touch();
      if (next.done) return;
      const event = next.value;
      if (event.type === 'text') {
        const bytes = Buffer.byteLength(event.delta, 'utf8');
        if (bytes > answerBytesLeft) {
          const head = utf8Prefix(event.delta, answerBytesLeft);
          if (head !== '') yield { type: 'text', delta: head };
          yield {
            type: 'finish',
            finishReason: 'length',
            // Nothing reported (see above): the recorder estimates it.
            usage: { promptTokens: 0, completionTokens: 0 },
            toolCalls: [],
          };
          return;
        }
        answerBytesLeft -= bytes;
      }
      yield event;
      if (event.type === 'finish') return;
    }
  } finally {
    // Stopped early (the budget, the consumer, a failure): the provider closes its request.
    await events?.return?.();
    idle.stop();
  }
}

/**
 * The idle clock of one call: aborts its signal after `ms` without a touch. One timer, re-armed
 * only when it fires (not per chunk).
 */
class IdleClock {
  private readonly controller = new AbortController();
  private last = Date.now();
  private timer: NodeJS.Timeout;

  constructor(private readonly ms: number) {
    this.timer = this.arm(ms);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  readonly touch = (): void => {
    this.last = Date.now();
  };

  stop(): void {
    clearTimeout(this.timer);
  }

  timeoutError(): ModelError {
    return new ModelError(
      'UPSTREAM_TIMEOUT',
      `The model sent nothing for ${Math.round(this.ms / 1000)} s.`,
      true,
    );
  }

  private arm(ms: number): NodeJS.Timeout {
    const timer = setTimeout(this.check, ms);
    timer.unref();
    return timer;
  }

  private readonly check = (): void => {
    const silent = Date.now() - this.last;
    if (silent < this.ms) {
      this.timer = this.arm(this.ms - silent);
      return;
    }
    this.controller.abort(this.timeoutError());
  };
}
