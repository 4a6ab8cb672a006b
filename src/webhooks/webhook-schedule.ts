/**
 * When an owed event is attempted again: waits that double from about 5 s, never longer than an
 * hour, for 24 hours after the event (WebhookStore.recordAttempt gives up after that) — about 30
 * attempts for a receiver that never answers.
 */
export function retryDelayMs(attempt: number): number {
  return Math.min(5_000 * 2 ** Math.min(attempt - 1, 20), 3_600_000);
}
