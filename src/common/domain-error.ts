/** Every failure the API reports on purpose has one of these codes; the exception filter maps each to HTTP. */
export enum ErrorCode {
  SessionNotFound = 'SESSION_NOT_FOUND',
  RunNotFound = 'RUN_NOT_FOUND',
  ToolCallNotFound = 'TOOL_CALL_NOT_FOUND',
  WebhookNotFound = 'WEBHOOK_NOT_FOUND',
  FileNotFound = 'FILE_NOT_FOUND',
  SessionBusy = 'SESSION_BUSY',
  ToolCallNotWaiting = 'TOOL_CALL_NOT_WAITING',
  /** A prompt to a child session: only its delegation gives it one. */
  ChildSession = 'CHILD_SESSION',
  InvalidRequest = 'INVALID_REQUEST',
  IdempotencyKeyReused = 'IDEMPOTENCY_KEY_REUSED',
  RateLimited = 'RATE_LIMITED',
  TooManyActiveRuns = 'TOO_MANY_ACTIVE_RUNS',
  /** SESSION_MAX_QUEUE prompts already wait for the session's active run. */
  QueueFull = 'QUEUE_FULL',
  ScheduleNotFound = 'SCHEDULE_NOT_FOUND',
  BudgetExceeded = 'BUDGET_EXCEEDED',
  ServerBusy = 'SERVER_BUSY',
  ShuttingDown = 'SHUTTING_DOWN',
  /** A model call a request made itself (an on-demand summary) failed upstream; `code` says how. */
  ModelFailed = 'MODEL_FAILED',
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra fields sent beside statusCode/message/error, e.g. `runId`. */
    readonly details: Record<string, unknown> = {},
    /** Seconds, for 429/503 answers. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}
