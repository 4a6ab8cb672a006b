import { DomainError, ErrorCode } from '../common/domain-error';

const IDEMPOTENCY_KEY_MAX = 200;

/** Where a stream resumes: after `Last-Event-ID` (or `?after=`), 0 for the start. */
export function resumePoint(lastEventId: string | undefined, after: string | undefined): number {
  const value = lastEventId?.trim() || after;
  if (value === undefined) return 0;
  if (!/^\d{1,9}$/.test(value)) {
    throw new DomainError(
      ErrorCode.InvalidRequest,
      'Last-Event-ID must be a whole number (the seq of the last event received)',
    );
  }
  return Number(value);
}

/** The `Idempotency-Key` header: absent, or 1–200 characters. */
export function idempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (header.length < 1 || header.length > IDEMPOTENCY_KEY_MAX) {
    throw new DomainError(
      ErrorCode.InvalidRequest,
      `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} characters long`,
    );
  }
  return header;
}
