import { applyDecorators, Body, Controller, Headers, Param, Post, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { EndUser } from '../auth/end-user';
import { Owner } from '../auth/owner.decorator';
import { ApiErrors } from '../http/api-errors.decorator';
import { ApiEventStream } from '../sse/api-event-stream.decorator';
import { CreateChatDto } from './dto/create-chat.dto';
import { CreateMessageDto } from './dto/create-message.dto';
import { idempotencyKey, resumePoint } from '../http/request-headers';
import { RunStreams } from './run-streams.service';
import { SessionIdPipe } from '../http/uuid-or-404.pipe';

@ApiTags('chat')
@Controller('v1')
export class ChatController {
  constructor(private readonly streams: RunStreams) {}

  @Post('chat')
  @ApiOperation({
    summary: 'Send a prompt (creating a session unless sessionId is given) and stream the run',
  })
  @ApiIdempotentStart()
  @ApiEventStream()
  @ApiErrors(404, 409, 422, 429, 503)
  chat(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Body() body: CreateChatDto,
    @Headers('idempotency-key') key: string | undefined,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Headers('traceparent') traceParent: string | undefined,
    @Res() reply: FastifyReply,
  ) {
    // responseFormat sent with a prompt is that run's, never the session's (also when it creates one).
    const { prompt, sessionId, onActive, responseFormat, ...options } = body;
    const idempotency = idempotent(key, scoped('chat', endUser), body);
    const retried = idempotency ? resumePoint(lastEventId, undefined) : 0;
    return this.streams.startAndStream(
      owner,
      { prompt, sessionId, session: options, responseFormat, idempotency, traceParent, onActive, endUser },
      reply,
      retried,
    );
  }

  @Post('sessions/:id/messages')
  @ApiOperation({ summary: 'Send a prompt to a session and stream the run' })
  @ApiIdempotentStart()
  @ApiEventStream()
  @ApiErrors(404, 409, 422, 429, 503)
  message(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Param('id', SessionIdPipe) sessionId: string,
    @Body() body: CreateMessageDto,
    @Headers('idempotency-key') key: string | undefined,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Headers('traceparent') traceParent: string | undefined,
    @Res() reply: FastifyReply,
  ) {
    const idempotency = idempotent(key, scoped(`messages:${sessionId}`, endUser), body);
    const retried = idempotency ? resumePoint(lastEventId, undefined) : 0;
    return this.streams.startAndStream(
      owner,
      {
        prompt: body.content,
        sessionId,
        responseFormat: body.responseFormat,
        idempotency,
        traceParent,
        onActive: body.onActive,
        endUser,
      },
      reply,
      retried,
    );
  }
}

/**
 * An Idempotency-Key's endpoint, with the end user it was sent for: the same key sent for another
 * end user (or without one) is another key, and never answers with this end user's run.
 */
function scoped(endpoint: string, endUser: string | null): string {
  return endUser === null ? endpoint : `${endpoint} for ${endUser}`;
}

function idempotent(header: string | undefined, scope: string, body: object) {
  const key = idempotencyKey(header);
  return key === undefined ? undefined : { key, scope, request: body };
}

/** The two headers a retry of a start request may send. */
function ApiIdempotentStart() {
  return applyDecorators(
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        'Up to 200 characters. Sent again within 24 hours with the same body, the request starts nothing and streams the run the first one started; with another body it is a 422',
    }),
    ApiHeader({
      name: 'Last-Event-ID',
      required: false,
      description: 'With a repeated Idempotency-Key: stream the run after this event',
    }),
  );
}
