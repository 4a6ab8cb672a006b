import type { ModelError } from './model-provider';

/** The longest wait an upstream's `retry-after` may ask for and still be honoured; beyond it, our own backoff. */
const RETRY_AFTER_MAX_MS = 60_000;
const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;

/**
 * When a model call that failed retryably before its first event is sent again, for every provider
 * alike (their SDKs' own retries are off): up to LLM_MAX_RETRIES more times to the same model, each
 * after the wait the upstream asked for (`retry-after-ms`, `retry-after` in seconds or as a date:
 * ModelError.retryAfterMs) when it asked for at most a minute, otherwise after an exponential backoff
 * with jitter (0.5 s, 1 s, 2 s … up to 8 s). Once they are spent, ModelProviders falls back to the
 * next of LLM_FALLBACK_MODELS. As the AI SDK's core owns retries for all its providers.
 */
export class RetryPolicy {
  constructor(
    readonly maxRetries: number,
    private readonly random: () => number = Math.random,
  ) {}

  /** The wait before retry number `retry` (1, 2, …) of a call that failed with `err`. */
  delayMs(retry: number, err: ModelError): number {
    const asked = err.retryAfterMs;
    if (asked !== undefined && asked >= 0 && asked <= RETRY_AFTER_MAX_MS) return asked;
    const base = Math.min(FIRST_DELAY_MS * 2 ** (retry - 1), MAX_DELAY_MS);
    return Math.round(base * (0.75 + this.random() * 0.5));
  }
}

/** The wait an upstream's answer asks for (`retry-after-ms`, then `retry-after`), in ms; undefined when none. */
export function retryAfterMs(headers: { get(name: string): string | null } | undefined): number | undefined {
  if (headers === undefined) return undefined;
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms)) return Math.max(0, ms);
  const after = headers.get('retry-after');
  if (after === null) return undefined;
  const seconds = Number.parseFloat(after);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(after);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function waitUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
