/**
 * The `code` of a Node system error (ENOENT, EACCES…), if it is one. Duck-typed rather than
 * `instanceof Error`: errors from another realm (a vm context, a worker) fail that check.
 */
export function errnoCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  return typeof err.code === 'string' ? err.code : undefined;
}

/** The message of anything thrown, for the same cross-realm reason. */
export function errorMessage(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'message' in err && typeof err.message === 'string') {
    return err.message;
  }
  return String(err);
}
