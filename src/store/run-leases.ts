import { LeaseLost } from './store-errors';
import { returningRows, type Queryable } from './store-sql';

/**
 * Who drives a run: the lease statements. A running run is leased to one process, which renews it
 * while it drives the run; a lease that runs out (the process died, hung, or gave it up) lets any
 * other process take the run over. Every statement here decides who holds a run inside PostgreSQL,
 * so any number of processes agree on it without talking to each other. `leaseMs` is how long a
 * lease holds without renewal (RUN_LEASE_MS). RunStore exposes these as its methods.
 */

/** Where a process asks the one driving a run to cancel it (payload: the run id). */
export const RUN_CANCEL_CHANNEL = 'lw_run_cancel';
/** Where a process says it gave up a run's lease (payload: the run id): another may take it over now. */
export const RUN_HANDOVER_CHANNEL = 'lw_run_handover';

/** A run this process has just taken over: leased to it, its resumes counted. */
export interface ClaimedRun {
  id: string;
  /** Its process gave it up while shutting down (`shutdown`), or died (`process_lost`). */
  reason: 'process_lost' | 'shutdown';
}

/** Locks the run's row for the transaction and throws LeaseLost unless `leaseOwner` still holds it. */
export async function assertLeased(tx: Queryable, runId: string, leaseOwner: string): Promise<void> {
  const rows: unknown[] = await tx.query(`SELECT 1 FROM runs WHERE id = $1 AND lease_owner = $2 FOR UPDATE`, [
    runId,
    leaseOwner,
  ]);
  if (rows.length === 0) throw new LeaseLost(runId);
}

/** Asks whichever process drives the run to cancel it: the flag (seen at its next lease renewal) and a notice, in one statement. */
export async function requestCancel(q: Queryable, runId: string): Promise<void> {
  await q.query(
    `UPDATE runs SET cancel_requested = true WHERE id = $1 RETURNING pg_notify('${RUN_CANCEL_CHANNEL}', id::text)`,
    [runId],
  );
}

/** Extends this process's leases; returns the runs whose lease it renewed, with those someone asked to cancel. */
export async function renewLeases(
  q: Queryable,
  leaseMs: number,
  leaseOwner: string,
  runIds: string[],
): Promise<{ renewed: string[]; cancelled: string[] }> {
  if (runIds.length === 0) return { renewed: [], cancelled: [] };
  const rows = returningRows<{ id: string; cancelRequested: boolean }>(
    await q.query(
      `UPDATE runs SET lease_expires_at = now() + $3::int * interval '1 millisecond'
          WHERE id = ANY($1::uuid[]) AND lease_owner = $2 AND status = 'running'
          RETURNING id, cancel_requested AS "cancelRequested"`,
      [runIds, leaseOwner, leaseMs],
    ),
  );
  return {
    renewed: rows.map((r) => r.id),
    cancelled: rows.filter((r) => r.cancelRequested).map((r) => r.id),
  };
}

/**
 * Takes over runs whose lease ran out (their process died, hung, or gave them up), in ONE
 * statement: each such row is locked and re-checked by whichever process gets to it first (the
 * others skip it, or see the lease renewed), so every lost run is claimed exactly once among any
 * number of processes. It leases them to `leaseOwner` and counts the take-over. Runs taken over
 * `maxResumes` times already, or asked to cancel, are not claimed: they are ended instead
 * (`endableRuns`); nor are those of `skip`. A lease given up at shutdown has no owner: that is how
 * its reason is told, and such a hand-over is neither counted nor refused — RUN_MAX_RESUMES bounds
 * the runs that keep killing their process, and no run fails because its process shut down (the
 * chaos soak's rolling restarts found runs abandoned by them).
 */
export async function claimExpiredRuns(
  q: Queryable,
  leaseMs: number,
  leaseOwner: string,
  maxResumes: number,
  limit: number,
  skip: readonly string[],
): Promise<ClaimedRun[]> {
  return returningRows<ClaimedRun>(
    await q.query(
      `WITH lost AS (
           SELECT id, lease_owner IS NULL AS handed_over FROM runs
            WHERE status = 'running' AND lease_expires_at <= now() AND NOT cancel_requested
              AND (resumes < $2 OR lease_owner IS NULL)
              AND NOT (id = ANY($5::uuid[]))
            ORDER BY lease_expires_at LIMIT $3
              FOR UPDATE SKIP LOCKED)
         UPDATE runs r SET lease_owner = $1, lease_expires_at = now() + $4::int * interval '1 millisecond',
                resumes = r.resumes + CASE WHEN lost.handed_over THEN 0 ELSE 1 END, updated_at = now()
           FROM lost WHERE r.id = lost.id
         RETURNING r.id, CASE WHEN lost.handed_over THEN 'shutdown' ELSE 'process_lost' END AS reason`,
      [leaseOwner, maxResumes, limit, leaseMs, skip],
    ),
  );
}

/**
 * Runs left `running` by a process whose lease ran out that are not to be taken over: lost more
 * than `maxResumes` times (they fail; not one handed over at shutdown, which is taken over), or
 * asked to cancel while nobody drove them.
 */
export async function endableRuns(
  q: Queryable,
  maxResumes: number,
  limit: number,
): Promise<{ id: string; cancelRequested: boolean }[]> {
  return q.query(
    `SELECT id, cancel_requested AS "cancelRequested" FROM runs
        WHERE status = 'running' AND lease_expires_at <= now()
          AND ((resumes >= $1 AND lease_owner IS NOT NULL) OR cancel_requested)
        ORDER BY lease_expires_at LIMIT $2`,
    [maxResumes, limit],
  );
}

/**
 * Gives up this process's leases of `runIds` at once (a shutdown hands its runs over): the lease
 * expires now and has no owner, so no write of this process lands any more, and a notice tells
 * every other process to take the runs over. Returns the runs given up.
 */
export async function releaseLeases(q: Queryable, leaseOwner: string, runIds: string[]): Promise<string[]> {
  if (runIds.length === 0) return [];
  const rows = returningRows<{ id: string }>(
    await q.query(
      `UPDATE runs SET lease_owner = NULL, lease_expires_at = now(), updated_at = now()
          WHERE id = ANY($1::uuid[]) AND lease_owner = $2 AND status = 'running'
          RETURNING id, pg_notify('${RUN_HANDOVER_CHANNEL}', id::text)`,
      [runIds, leaseOwner],
    ),
  );
  return rows.map((r) => r.id);
}
