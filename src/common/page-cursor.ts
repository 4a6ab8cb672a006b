import { DomainError, ErrorCode } from './domain-error';

/** The cursors of newest-first pages (`GET /v1/sessions`, `GET /v1/files`). */

const CURSOR_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/;

/** PostgreSQL's text of a real timestamptz: the shape, and a date and time that exist. */
function isCursorTime(text: string): boolean {
  const m = CURSOR_TIME.exec(text);
  if (!m) return false;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number);
  const t = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  return t.getUTCMonth() === mo - 1 && t.getUTCDate() === d && h < 24 && mi < 60 && s < 60;
}
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A page's `nextCursor`: the last row's (created_at as PostgreSQL's text, id). */
export function encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
}

/** A cursor from encodeCursor; anything else is a 400. */
export function decodeCursor(cursor: string): { createdAt: string; id: string } {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [unknown, unknown];
    // Exactly what encodeCursor wrote (PostgreSQL's text of a timestamptz, a uuid): anything else is
    // forged, and must not reach the query as a value PostgreSQL would refuse.
    if (typeof createdAt === 'string' && typeof id === 'string' && isCursorTime(createdAt) && UUID.test(id)) {
      return { createdAt, id };
    }
  } catch {
    // fall through
  }
  throw new DomainError(ErrorCode.InvalidRequest, 'cursor is not a cursor this server gave out');
}
