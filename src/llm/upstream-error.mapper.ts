import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { ModelError } from './model-provider';
import { retryAfterMs } from './retry-policy';

const MAX_MESSAGE = 500;

/** Words an upstream uses when a later attempt may well succeed. */
const TRANSIENT =
  /overload|rate.?limit|too many requests|capacity|unavailable|server_error|api_error|internal server error|try again|\b(?:429|5\d\d)\b/i;

/** What an official SDK's API error carries (openai's and Anthropic's are generated alike). */
interface SdkApiError extends Error {
  readonly status: number | undefined;
  /** The answer's JSON body (Anthropic: the whole body; openai: its `error` object). */
  readonly error: unknown;
  readonly type?: unknown;
  readonly code?: unknown;
  readonly headers?: { get(name: string): string | null };
}

type ErrorClass<T extends Error> = abstract new (...args: never[]) => T;

/** An official SDK's error classes, for the one mapper to tell its errors apart. */
export interface SdkErrorClasses {
  APIError: ErrorClass<SdkApiError>;
  APIConnectionError: ErrorClass<Error>;
  APIConnectionTimeoutError: ErrorClass<Error>;
}

const OPENAI_ERRORS: SdkErrorClasses = { APIError, APIConnectionError, APIConnectionTimeoutError };

/**
 * Maps whatever an SDK (or the body stream under it) threw into a ModelError with a stable code —
 * the one mapper of every provider: `sdk` names the SDK's error classes (the openai SDK's unless
 * given). Aborts are the caller's business and must be recognised before calling this.
 */
export function mapUpstreamError(error: unknown, sdk: SdkErrorClasses = OPENAI_ERRORS): ModelError {
  if (error instanceof ModelError) return error;
  if (error instanceof sdk.APIConnectionTimeoutError) {
    return new ModelError('UPSTREAM_TIMEOUT', 'the model upstream timed out', true);
  }
  if (error instanceof sdk.APIConnectionError) {
    return new ModelError(
      'UPSTREAM_CONNECTION',
      `could not reach the model upstream: ${describe(error)}`,
      true,
    );
  }
  if (error instanceof sdk.APIError) return fromApiError(error);
  if (error instanceof SyntaxError) {
    return new ModelError(
      'UPSTREAM_MALFORMED',
      `the model upstream sent a malformed stream: ${describe(error)}`,
      false,
    );
  }
  // Anything else was thrown while reading the body: the connection broke (undici's "terminated", ECONNRESET…).
  return new ModelError(
    'UPSTREAM_CONNECTION',
    `the model upstream connection failed: ${describe(error)}`,
    true,
  );
}

/**
 * By its status; an error sent inside a 200 stream has none, and is judged by its kind: the SDK's
 * `type` and `code`, and the body's `error.type` (Anthropic's `event: error`: overloaded_error,
 * api_error…).
 */
function fromApiError(error: SdkApiError): ModelError {
  const body = error.error as { error?: { type?: unknown } } | undefined;
  const bodyType = typeof body === 'object' && body !== null ? body.error?.type : undefined;
  const kind = [error.type, error.code, bodyType].filter((k) => typeof k === 'string').join(' ');
  const mapped = modelErrorFor(error.status, error.message, kind, error.code);
  const wait = mapped.retryable ? retryAfterMs(error.headers) : undefined;
  return wait === undefined ? mapped : new ModelError(mapped.code, mapped.message, true, mapped.status, wait);
}

/**
 * An upstream's error answer as a ModelError: by its HTTP status, or — for an error sent inside a
 * 200 stream (no status) — by its words. Shared by every provider, whatever its SDK.
 */
export function modelErrorFor(
  status: number | undefined,
  text: string,
  kind: string,
  code?: unknown,
): ModelError {
  const message = `model upstream: ${clip(text)}`;
  if (status === undefined) {
    // An error object inside a 200 stream: only its words say whether trying again could help.
    const retryable =
      (typeof code === 'number' && (code === 429 || code >= 500)) || TRANSIENT.test(`${text} ${kind}`);
    return new ModelError('UPSTREAM_ERROR', message, retryable);
  }
  if (status === 429) return new ModelError('UPSTREAM_RATE_LIMITED', message, true, status);
  if (status >= 500) return new ModelError('UPSTREAM_UNAVAILABLE', message, true, status);
  if (status === 401 || status === 403) return new ModelError('UPSTREAM_AUTH', message, false, status);
  if (status === 408) return new ModelError('UPSTREAM_TIMEOUT', message, true, status);
  if (status >= 400) return new ModelError('UPSTREAM_BAD_REQUEST', message, false, status);
  return new ModelError('UPSTREAM_ERROR', message, false, status);
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return clip(String(error));
  const cause: unknown = error.cause;
  const detail = cause instanceof Error && cause.message !== '' ? ` (${cause.message})` : '';
  return clip(error.message + detail);
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}
