import { HttpStatus } from '@nestjs/common';
import { ErrorCode } from './domain-error';

/** The HTTP status of each domain error code; a new code does not compile until it is mapped here. */
export function domainErrorStatus(code: ErrorCode): HttpStatus {
  switch (code) {
    case ErrorCode.SessionNotFound:
    case ErrorCode.RunNotFound:
    case ErrorCode.ToolCallNotFound:
    case ErrorCode.WebhookNotFound:
    case ErrorCode.ScheduleNotFound:
    case ErrorCode.FileNotFound:
      return HttpStatus.NOT_FOUND;
    case ErrorCode.SessionBusy:
    case ErrorCode.ToolCallNotWaiting:
    case ErrorCode.ChildSession:
      return HttpStatus.CONFLICT;
    case ErrorCode.InvalidRequest:
      return HttpStatus.BAD_REQUEST;
    case ErrorCode.IdempotencyKeyReused:
      return HttpStatus.UNPROCESSABLE_ENTITY;
    case ErrorCode.RateLimited:
    case ErrorCode.TooManyActiveRuns:
    case ErrorCode.QueueFull:
    case ErrorCode.BudgetExceeded:
      return HttpStatus.TOO_MANY_REQUESTS;
    case ErrorCode.ServerBusy:
    case ErrorCode.ShuttingDown:
      return HttpStatus.SERVICE_UNAVAILABLE;
    case ErrorCode.ModelFailed:
      return HttpStatus.BAD_GATEWAY;
  }
}
