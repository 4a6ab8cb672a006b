import { HttpException, HttpStatus } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';
import { DomainError } from './domain-error';
import { domainErrorStatus } from './domain-error-status';

/** What the client is sent for an error: Nest's `{ statusCode, message, error }`, extra fields beside. */
export interface ErrorResponse {
  status: number;
  body: { statusCode: number; message: string | string[]; error: string; [extra: string]: unknown };
  headers: Record<string, string>;
  /** Not an error the API reports on purpose: log it, with its stack. */
  unexpected: boolean;
}

export interface ErrorResponseContext {
  requestId: string;
  bodyLimitBytes: number;
}

/** Maps anything thrown while serving a request to its answer. */
export function errorResponse(exception: unknown, context: ErrorResponseContext): ErrorResponse {
  if (exception instanceof DomainError) return fromDomainError(exception);
  if (exception instanceof HttpException) return fromHttpException(exception, context);
  const fastifyError = requestError(exception);
  if (fastifyError !== null) {
    return answer(fastifyError.statusCode, refinedMessage(fastifyError, fastifyError.message, context), {});
  }
  return {
    ...answer(HttpStatus.INTERNAL_SERVER_ERROR, 'Internal server error', { requestId: context.requestId }),
    unexpected: true,
  };
}

function fromDomainError(error: DomainError): ErrorResponse {
  const response = answer(domainErrorStatus(error.code), error.message, error.details);
  if (error.retryAfterSeconds !== undefined) {
    response.headers['retry-after'] = String(Math.max(1, Math.ceil(error.retryAfterSeconds)));
  }
  return response;
}

/** As Nest's own filter answers, plus `error` whenever Nest would leave it out. */
function fromHttpException(exception: HttpException, context: ErrorResponseContext): ErrorResponse {
  const status = exception.getStatus();
  const response = exception.getResponse();
  const cause = requestError(exception.cause);
  if (typeof response === 'string') {
    return answer(status, cause ? refinedMessage(cause, response, context) : response, {});
  }
  const { statusCode: _statusCode, message, error, ...extra } = response as Record<string, unknown>;
  return answer(
    status,
    isMessage(message) ? message : statusText(status),
    extra,
    typeof error === 'string' ? error : undefined,
  );
}

function answer(
  status: number,
  message: string | string[],
  extra: Record<string, unknown>,
  error = statusText(status),
): ErrorResponse {
  const headers: Record<string, string> = {};
  if (status === 401) headers['www-authenticate'] = 'Bearer realm="loopwright"';
  return { status, body: { ...extra, statusCode: status, message, error }, headers, unexpected: false };
}

interface RequestError {
  statusCode: number;
  code: string;
  message: string;
}

/**
 * A 4xx error Fastify raises while reading the request (FST_ERR_CTP_*: bad JSON, too large, an
 * unsupported type…). Its message is meant for the client; a 5xx one is a server fault.
 */
function requestError(error: unknown): RequestError | null {
  if (!(error instanceof Error)) return null;
  const { statusCode, code } = error as Error & { statusCode?: unknown; code?: unknown };
  if (typeof statusCode !== 'number' || statusCode < 400 || statusCode > 499) return null;
  const fromFastify = error.name === 'FastifyError' || (typeof code === 'string' && code.startsWith('FST_'));
  // The JSON parser reports a syntax error as a SyntaxError with statusCode 400.
  if (!fromFastify && !(error instanceof SyntaxError)) return null;
  return { statusCode, code: typeof code === 'string' ? code : '', message: error.message };
}

function refinedMessage(error: RequestError, message: string, context: ErrorResponseContext): string {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `Request body is larger than the limit of ${context.bodyLimitBytes} bytes (BODY_LIMIT_BYTES)`;
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return `${message}: request bodies must be application/json`;
    default:
      return message;
  }
}

function isMessage(value: unknown): value is string | string[] {
  return typeof value === 'string' || (Array.isArray(value) && value.every((v) => typeof v === 'string'));
}

function statusText(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}
