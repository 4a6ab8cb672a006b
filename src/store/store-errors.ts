/**
 * What can go wrong with a run's writes, told apart: the database unreachable for now (worth retrying
 * while the run's lease lasts), the run no longer this process's (another one took it over or ended
 * it), or anything else (the write itself is refused: the run fails).
 */

/** This process no longer holds the run's lease: its writes must not land, and it must let the run go. */
export class LeaseLost extends Error {
  constructor(readonly runId: string) {
    super(`run ${runId} is no longer leased to this process`);
    this.name = 'LeaseLost';
  }
}

/** The store stayed unreachable until the run's lease ran out: the process lets the run go. */
export class StoreUnavailable extends Error {
  constructor(
    readonly runId: string,
    lastError: unknown,
  ) {
    super(
      `run ${runId}: the database stayed unreachable until the lease ran out (${lastError instanceof Error ? lastError.message : String(lastError)})`,
      { cause: lastError },
    );
    this.name = 'StoreUnavailable';
  }
}

/** A second active run of a session refused by its unique index (SQLSTATE 23505 on the run's insert). */
export class SessionHasActiveRun extends Error {
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} already has an active run`);
    this.name = 'SessionHasActiveRun';
  }
}

/** SQLSTATE of a unique violation. */
const UNIQUE_VIOLATION = '23505';

/** Whether the database refused a write as a duplicate of a unique key. */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === UNIQUE_VIOLATION;
}

/** Errors after which this process must stop driving the run without writing anything more. */
export function isRunReleased(err: unknown): err is LeaseLost | StoreUnavailable {
  return err instanceof LeaseLost || err instanceof StoreUnavailable;
}

// SQLSTATE classes and codes that mean "the server is not there right now", not "this write is wrong".
const UNAVAILABLE_CODES = new Set(['57P01', '57P02', '57P03', '53300', '40001', '40P01']);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
]);
const CONNECTION_MESSAGES = [
  'Connection terminated',
  'connection error',
  'Client was closed',
  'not queryable',
  'terminating connection',
  'the database system is',
];

/** True when the database could not be reached (or dropped the connection): the same write may succeed later. */
export function isStoreUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; message?: unknown; driverError?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (code.startsWith('08') || UNAVAILABLE_CODES.has(code) || NETWORK_CODES.has(code)) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  if (CONNECTION_MESSAGES.some((m) => message.includes(m))) return true;
  return e.driverError !== undefined && e.driverError !== err ? isStoreUnavailable(e.driverError) : false;
}
