import { isStoreUnavailable, StoreUnavailable } from '../store/store-errors';

/**
 * This process's claim on a run it drives, as this process knows it: who it is, and until when the
 * lease surely holds — the last renewal this process saw succeed, plus RUN_LEASE_MS. While the store
 * is down nobody can renew it; once that time passes another process may fail the run, so this one
 * stops retrying and lets the run go.
 */
export class RunLease {
  private renewedAt: number;

  constructor(
    readonly owner: string,
    private readonly leaseMs: number,
    /** When the lease was last set in the database (the run's start or its take-up). */
    renewedAt: number = Date.now(),
  ) {
    this.renewedAt = renewedAt;
  }

  /** A renewal sent at `at` succeeded. */
  renewed(at: number): void {
    this.renewedAt = Math.max(this.renewedAt, at);
  }

  /** Milliseconds until the lease may have run out (≤ 0: it may already have). */
  remainingMs(now: number = Date.now()): number {
    return this.renewedAt + this.leaseMs - now;
  }
}

/** Backoff of a try while the database is unreachable: 50 ms, doubling, at most 1 s between tries. */
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 1000;

/**
 * Runs `work` (a read or write of run `runId`), trying again with backoff while the database is
 * unreachable and `lease` lasts; then throws StoreUnavailable. Other errors are thrown at once.
 * `work` is told whether this is a retry: a write first asks whether its failed try landed after all.
 */
export async function retryWhileLeased<T>(
  lease: RunLease,
  runId: string,
  work: (retry: boolean) => Promise<T>,
): Promise<T> {
  for (let delay = RETRY_FIRST_MS, retry = false; ; delay = Math.min(delay * 2, RETRY_MAX_MS), retry = true) {
    try {
      return await work(retry);
    } catch (err) {
      if (!isStoreUnavailable(err)) throw err;
      const left = lease.remainingMs();
      if (left <= 0) throw new StoreUnavailable(runId, err);
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
    }
  }
}
