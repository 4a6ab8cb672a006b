import { Body, Controller, Param, Post, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Owner } from '../auth/owner.decorator';
import { ApiEventStream } from './api-event-stream.decorator';
import { CreateChatDto } from './dto/create-chat.dto';
import { CreateMessageDto } from './dto/create-message.dto';
import { RunStreamsService } from './run-streams.service';
import { SessionIdPipe } from './uuid-or-404.pipe';

@ApiTags('chat')
@Controller('v1')
export class ChatController {
  constructor(private readonly streams: RunStreamsService) {}

  @Post('chat')
  @ApiOperation({
    summary: 'Send a prompt (creating a session unless sessionId is given) and stream the run',
  })
  @ApiEventStream()
  chat(
    @Owner() owner: string,
    @Body() { prompt, sessionId, ...options }: CreateChatDto,
    @Res() reply: FastifyReply,
  ) {
    return this.streams.startAndStream(owner, { prompt, sessionId, session: options }, reply);
  }

  @Post('sessions/:id/messages')
  @ApiOperation({ summary: 'Send a prompt to a session and stream the run' })
  @ApiEventStream()
  message(
    @Owner() owner: string,
    @Param('id', SessionIdPipe) sessionId: string,
    @Body() body: CreateMessageDto,
    @Res() reply: FastifyReply,
  ) {
    return this.streams.startAndStream(owner, { prompt: body.content, sessionId }, reply);
  }
}
