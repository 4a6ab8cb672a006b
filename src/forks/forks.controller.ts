import { Body, Controller, Param, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Owner } from '../auth/owner.decorator';
import { ApiErrors } from '../http/api-errors.decorator';
import { RunIdPipe, SessionIdPipe } from '../http/uuid-or-404.pipe';
import { SessionResponse } from '../sessions/dto/session.response';
import { sessionView } from '../sessions/session.presenter';
import { ForkSessionDto } from './dto/fork-session.dto';
import { ReplayResponse, ReplayRunDto } from './dto/replay-run.dto';
import { Forks } from './forks.service';
import { Replays } from './replays.service';

/** "Fork and replay": `POST /v1/sessions/:id/fork` and `POST /v1/runs/:id/replay`. */
@ApiTags('sessions')
@Controller('v1')
export class ForksController {
  constructor(
    private readonly forks: Forks,
    private readonly replays: Replays,
  ) {}

  @Post('sessions/:id/fork')
  @ApiOperation({ summary: 'Fork a session at a message: a new session with its conversation up to there' })
  @ApiBody({ type: ForkSessionDto, required: false, description: 'The body may be left out' })
  @ApiCreatedResponse({ type: SessionResponse })
  @ApiErrors(400, 404)
  async fork(
    @Owner() owner: string,
    @Param('id', SessionIdPipe) id: string,
    @Body() body: ForkSessionDto,
  ): Promise<SessionResponse> {
    const fork = await this.forks.fork(owner, id, body?.atMessageId ?? null);
    return sessionView(fork.session);
  }

  @Post('runs/:id/replay')
  @ApiTags('runs')
  @ApiOperation({
    summary:
      'Run a run again in a fork of its session: from the record (no model call, no tool), or live from a step',
  })
  @ApiBody({ type: ReplayRunDto, required: false, description: 'The body may be left out' })
  @ApiCreatedResponse({ type: ReplayResponse })
  @ApiErrors(400, 404, 409, 429, 503)
  replay(
    @Owner() owner: string,
    @Param('id', RunIdPipe) id: string,
    @Body() body: ReplayRunDto,
  ): Promise<ReplayResponse> {
    return this.replays.replay(owner, id, { fromStep: body?.fromStep, model: body?.model });
  }
}
