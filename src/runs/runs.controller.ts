import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { ApiErrors } from '../http/api-errors.decorator';
import { RunResponse, StreamTokenResponse } from './dto/run.response';
import type { FastifyReply } from 'fastify';
import { Runs } from './runs.service';
import { ToolCallDecisions } from './tool-call-decisions.service';
import { Owner, ViaStreamToken } from '../auth/owner.decorator';
import { StreamTokens, streamTokenExpiry } from '../auth/stream-tokens';
import { ApiEventStream } from '../sse/api-event-stream.decorator';
import { ApprovalDto } from './dto/approval.dto';
import { RunEventsQuery } from './dto/run-events.query';
import { ToolResultDto } from './dto/tool-result.dto';
import { runView } from './run.presenter';
import { resumePoint } from '../http/request-headers';
import { RunStreams } from './run-streams.service';
import { RunIdPipe } from '../http/uuid-or-404.pipe';

@ApiTags('runs')
@Controller('v1/runs')
export class RunsController {
  constructor(
    private readonly runs: Runs,
    private readonly decisions: ToolCallDecisions,
    private readonly streams: RunStreams,
    private readonly tokens: StreamTokens,
  ) {}

  @Get(':id')
  @ApiOperation({ summary: "A run's status, usage and the calls it waits for" })
  @ApiOkResponse({ type: RunResponse })
  @ApiErrors(404)
  async get(@Owner() owner: string, @Param('id', RunIdPipe) id: string): Promise<RunResponse> {
    return runView(await this.runs.getRun(owner, id));
  }

  @Get(':id/events')
  @ApiOperation({
    summary: 'Every event of the run after Last-Event-ID (or ?after=), then live ones until it ends',
  })
  @ApiHeader({ name: 'Last-Event-ID', required: false })
  @ApiEventStream()
  @ApiNoContentResponse({ description: 'The run has ended and the client already has its last event' })
  @ApiErrors(400, 404, 503)
  events(
    @Owner() owner: string,
    @Param('id', RunIdPipe) id: string,
    @Query() query: RunEventsQuery,
    @Headers('last-event-id') lastEventId: string | undefined,
    @ViaStreamToken() viaStreamToken: boolean,
    @Res() reply: FastifyReply,
  ) {
    const after = resumePoint(lastEventId, query.after);
    return this.streams.follow(owner, id, after, reply, viaStreamToken ? 'stream-token' : 'api-key');
  }

  @Post(':id/stream-token')
  @ApiOperation({
    summary: "A token that reads this run's events with ?token= (for EventSource, which sends no headers)",
  })
  @ApiCreatedResponse({ type: StreamTokenResponse })
  @ApiErrors(404)
  async streamToken(
    @Owner() owner: string,
    @Param('id', RunIdPipe) id: string,
  ): Promise<StreamTokenResponse> {
    const run = await this.runs.assertRun(owner, id);
    return { token: this.tokens.issue(owner, run.id), expiresAt: streamTokenExpiry(run.finishedAt) };
  }

  @Post(':id/cancel')
  @HttpCode(202)
  @ApiOperation({ summary: 'Cancel the run (idempotent)' })
  @ApiAcceptedResponse({ description: 'Cancelling (or already ended)' })
  @ApiErrors(404)
  async cancel(@Owner() owner: string, @Param('id', RunIdPipe) id: string): Promise<void> {
    await this.runs.cancel(owner, id);
  }

  @Post(':id/tool-calls/:callId/approval')
  @HttpCode(202)
  @ApiOperation({ summary: 'Approve (possibly with edited arguments) or reject a call waiting for approval' })
  @ApiAcceptedResponse({ description: 'Decided; the run goes on' })
  @ApiErrors(404, 409)
  async approve(
    @Owner() owner: string,
    @Param('id', RunIdPipe) id: string,
    @Param('callId') callId: string,
    @Body() body: ApprovalDto,
  ): Promise<void> {
    await this.decisions.decide(owner, id, callId, { kind: 'approval', ...body });
  }

  @Post(':id/tool-calls/:callId/result')
  @HttpCode(202)
  @ApiOperation({ summary: "The client's result of a client tool call" })
  @ApiAcceptedResponse({ description: 'Taken; the run goes on' })
  @ApiErrors(404, 409)
  async result(
    @Owner() owner: string,
    @Param('id', RunIdPipe) id: string,
    @Param('callId') callId: string,
    @Body() body: ToolResultDto,
  ): Promise<void> {
    await this.decisions.decide(owner, id, callId, {
      kind: 'result',
      content: body.content,
      isError: body.isError ?? false,
    });
  }
}
