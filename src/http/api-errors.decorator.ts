import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';

export const ERROR_RESPONSE_REF = '#/components/schemas/ErrorResponse';

const DESCRIPTIONS = {
  400: 'A parameter, header or query value is not valid',
  404: 'No such session, run, call or file — or not the caller’s',
  409: 'The session has an active run (its id is `runId`), or the call is not waiting for this',
  422: 'This Idempotency-Key came with another body (the first request’s run is `runId`)',
  429: "Rate limited, too many active runs for this key, or the key's budget spent (`code` BUDGET_EXCEEDED; see Retry-After)",
  503: 'The server is shutting down or at its limit of runs or streams (see Retry-After)',
} as const;

export type ApiErrorStatus = keyof typeof DESCRIPTIONS;

/**
 * Documents the errors a route answers itself, each with the error shape (ErrorResponse). The ones
 * every route can answer (401, 421, and for a body 400/413/415) are added by completeDocument.
 */
export function ApiErrors(...statuses: ApiErrorStatus[]) {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: DESCRIPTIONS[status],
        content: { 'application/json': { schema: { $ref: ERROR_RESPONSE_REF } } },
        ...(status === 429 || status === 503
          ? { headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } } }
          : {}),
      }),
    ),
  );
}
