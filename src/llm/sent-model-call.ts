import type { ModelProvider, ModelRequest, ModelStreamEvent } from './model-provider';

function noop(): void {}

/**
 * A model call whose request has gone out: its first event is already asked for, so the upstream
 * works while the caller does something else (a run's first call leaves with its start statement).
 * Its events are read once, in order, by iterating it; until then they wait. A failure before the
 * read is kept for it (never an unhandled rejection); a call nobody will read is stopped through the
 * signal it was sent with.
 */
export class SentModelCall implements AsyncIterable<ModelStreamEvent> {
  /** performance.now() when the request was sent. */
  readonly sentAt = performance.now();
  private readonly events: AsyncIterator<ModelStreamEvent>;
  private first: Promise<IteratorResult<ModelStreamEvent>> | null;

  constructor(
    provider: ModelProvider,
    readonly request: ModelRequest,
    signal: AbortSignal,
  ) {
    this.events = provider.stream(request, signal)[Symbol.asyncIterator]();
    const first = this.events.next();
    first.catch(noop);
    this.first = first;
  }

  [Symbol.asyncIterator](): AsyncIterator<ModelStreamEvent> {
    return {
      next: () => {
        const first = this.first;
        this.first = null;
        return first ?? this.events.next();
      },
      // The reader stopped early: the provider ends the request.
      return: async () => {
        this.first = null;
        await this.events.return?.();
        return { done: true, value: undefined };
      },
    };
  }
}
