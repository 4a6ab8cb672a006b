import { Body, Controller, Get, Headers, Param, Post, Res } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { EndUser } from '../../auth/end-user';
import { Owner } from '../../auth/owner.decorator';
import { ApiErrors } from '../../http/api-errors.decorator';
import { AiSdkChatDto } from './ai-sdk-chat.dto';
import { AiSdkChats } from './ai-sdk-chats.service';

const UI_MESSAGE_STREAM = {
  description:
    'AI SDK UI message stream v1 (header x-vercel-ai-ui-message-stream: v1): `data: <UIMessageChunk JSON>` lines, then `data: [DONE]`',
  content: { 'text/event-stream': { schema: { type: 'string' } } },
} as const;

@ApiTags('frontends')
@Controller('v1/ai-sdk/chat')
export class AiSdkChatController {
  constructor(private readonly chats: AiSdkChats) {}

  @Post()
  @ApiOperation({
    summary: "The AI SDK's useChat (DefaultChatTransport): a prompt, or approvals and client tool outputs",
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse(UI_MESSAGE_STREAM)
  @ApiErrors(409, 429, 503)
  send(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Body() { id, messages, trigger, messageId: _, ...options }: AiSdkChatDto,
    @Res() reply: FastifyReply,
    @Headers('traceparent') traceParent: string | undefined,
  ) {
    return this.chats.send(owner, { chatId: id, messages, trigger, options, traceParent, endUser }, reply);
  }

  @Get(':chatId/messages')
  @ApiOperation({
    summary: "The chat's stored conversation as UIMessage[] (for useChat({ messages }) after a reload)",
  })
  @ApiOkResponse({
    description:
      'UIMessage[]: user text, assistant text, tool parts in their current states; [] for an unused chat id',
    schema: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'role', 'parts'],
        properties: {
          id: { type: 'string' },
          role: { type: 'string', enum: ['user', 'assistant'] },
          metadata: { type: 'object', additionalProperties: true },
          parts: { type: 'array', items: { type: 'object', additionalProperties: true } },
        },
      },
    },
  })
  @ApiErrors(400)
  messages(@Owner() owner: string, @EndUser() endUser: string | null, @Param('chatId') chatId: string) {
    return this.chats.messages(owner, endUser, chatId);
  }

  @Get(':chatId/stream')
  @ApiOperation({ summary: "The chat's running or waiting run from its start (useChat's resume)" })
  @ApiProduces('text/event-stream')
  @ApiOkResponse(UI_MESSAGE_STREAM)
  @ApiNoContentResponse({ description: 'The chat has no running or waiting run' })
  @ApiErrors(400, 503)
  resume(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Param('chatId') chatId: string,
    @Res() reply: FastifyReply,
  ) {
    return this.chats.resume(owner, endUser, chatId, reply);
  }
}
