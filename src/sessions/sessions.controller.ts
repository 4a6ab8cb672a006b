import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { ApiErrors } from '../http/api-errors.decorator';
import { Sessions } from './sessions.service';
import { EndUser, sessionEndUser } from '../auth/end-user';
import { Owner } from '../auth/owner.decorator';
import { ListSessionsQuery } from './dto/list-sessions.query';
import { SessionOptionsDto } from './dto/session-options.dto';
import { UpdateSessionDto } from './dto/update-session.dto';
import {
  FileChangeResponse,
  SessionDetailResponse,
  SessionPageResponse,
  SessionResponse,
} from './dto/session.response';
import { messageView, sessionView } from './session.presenter';
import { SessionIdPipe } from '../http/uuid-or-404.pipe';

@ApiTags('sessions')
@Controller('v1/sessions')
export class SessionsController {
  constructor(private readonly sessions: Sessions) {}

  @Post()
  @ApiOperation({ summary: 'Create a session' })
  @ApiBody({
    type: SessionOptionsDto,
    required: false,
    description: 'Every option may be left out, the body too',
  })
  @ApiCreatedResponse({ type: SessionResponse })
  async create(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Body() options: SessionOptionsDto,
  ): Promise<SessionResponse> {
    return sessionView(
      await this.sessions.create(owner, {
        ...options,
        endUser: sessionEndUser(endUser, options.endUser) ?? undefined,
      }),
    );
  }

  @Get()
  @ApiOperation({ summary: "The caller's sessions, newest first" })
  @ApiOkResponse({ type: SessionPageResponse })
  @ApiErrors(400)
  async list(@Owner() owner: string, @EndUser() endUser: string | null, @Query() query: ListSessionsQuery) {
    // With X-End-User, only that end user's: naming another in the query answers none.
    if (endUser !== null && query.endUser !== undefined && query.endUser !== endUser) {
      return { data: [], nextCursor: null };
    }
    const page = await this.sessions.list(
      owner,
      endUser ?? query.endUser ?? null,
      query.limit ?? 20,
      query.cursor,
      query.children === 'true',
    );
    return { data: page.data.map(sessionView), nextCursor: page.nextCursor };
  }

  @Get(':id')
  @ApiOperation({ summary: 'A session with its messages in order' })
  @ApiOkResponse({ type: SessionDetailResponse })
  @ApiErrors(404)
  async get(@Owner() owner: string, @Param('id', SessionIdPipe) id: string): Promise<SessionDetailResponse> {
    const session = await this.sessions.get(owner, id);
    return {
      ...sessionView(session),
      activeRunId: session.activeRunId,
      messages: session.messages.map((m) => messageView(m, session.deletedFiles)),
    };
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Rename a session (its title is the only thing that changes)' })
  @ApiOkResponse({ type: SessionResponse })
  @ApiErrors(400, 404)
  async update(
    @Owner() owner: string,
    @Param('id', SessionIdPipe) id: string,
    @Body() { title }: UpdateSessionDto,
  ): Promise<SessionResponse> {
    return sessionView(await this.sessions.rename(owner, id, title));
  }

  @Get(':id/changes')
  @ApiOperation({ summary: "Every file the session's tool calls changed, with sha256 before and after" })
  @ApiOkResponse({ type: [FileChangeResponse] })
  @ApiErrors(404)
  changes(@Owner() owner: string, @Param('id', SessionIdPipe) id: string) {
    return this.sessions.changes(owner, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a session with its messages, runs and tool calls' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors(404, 409)
  async delete(@Owner() owner: string, @Param('id', SessionIdPipe) id: string): Promise<void> {
    await this.sessions.delete(owner, id);
  }
}
