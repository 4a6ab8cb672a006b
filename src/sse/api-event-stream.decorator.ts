import { applyDecorators } from '@nestjs/common';
import { ApiOkResponse, ApiProduces } from '@nestjs/swagger';
import { RUN_EVENT_SCHEMA } from '../events/run-event-schemas';

/**
 * Documents a route that answers 200 with the run's Server-Sent Events. Each event's `data:` is a
 * RunEvent (the schemas setupOpenApi adds to the document).
 */
export function ApiEventStream(
  description = 'The run as Server-Sent Events (`id:` = seq, `event:` = type, `data:` = the event as JSON); a `: ping` comment every 15 s without events',
) {
  return applyDecorators(
    ApiProduces('text/event-stream'),
    ApiOkResponse({
      description,
      headers: {
        'X-Run-Id': { description: 'The run streamed', schema: { type: 'string', format: 'uuid' } },
        'X-Session-Id': { description: 'Its session', schema: { type: 'string', format: 'uuid' } },
      },
      content: {
        'text/event-stream': { schema: { $ref: `#/components/schemas/${RUN_EVENT_SCHEMA}` } },
      },
    }),
  );
}
