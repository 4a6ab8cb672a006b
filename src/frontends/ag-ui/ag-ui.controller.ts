import { Body, Controller, Headers, Post, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { EndUser } from '../../auth/end-user';
import { Owner } from '../../auth/owner.decorator';
import { ApiErrors } from '../../http/api-errors.decorator';
import { AgUiRuns } from './ag-ui-runs.service';

@ApiTags('frontends')
@Controller('v1/ag-ui')
export class AgUiController {
  constructor(private readonly agUi: AgUiRuns) {}

  @Post()
  @ApiOperation({ summary: 'AG-UI: a RunAgentInput in, AG-UI events out (threadId names a session)' })
  @ApiBody({
    description: 'An AG-UI RunAgentInput; unknown fields such as protocolVersion are accepted',
    schema: {
      type: 'object',
      required: ['threadId', 'runId', 'messages', 'tools', 'context'],
      additionalProperties: true,
      properties: {
        threadId: { type: 'string' },
        runId: { type: 'string' },
        messages: { type: 'array', items: { type: 'object', additionalProperties: true } },
        tools: { type: 'array', items: { type: 'object', additionalProperties: true } },
        context: { type: 'array', items: { type: 'object', additionalProperties: true } },
        state: {},
        forwardedProps: { type: 'object', additionalProperties: true },
      },
    },
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({
    description: 'AG-UI events as Server-Sent Events (`data: <event JSON>`), encoded by @ag-ui/encoder',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @ApiErrors(409, 429, 503)
  run(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Body() body: unknown,
    @Res() reply: FastifyReply,
    @Headers('traceparent') traceParent: string | undefined,
  ) {
    return this.agUi.run(owner, endUser, body, reply, traceParent);
  }
}
