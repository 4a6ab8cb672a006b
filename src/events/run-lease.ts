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
