import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Owner } from '../auth/owner.decorator';
import { ApiErrors } from '../http/api-errors.decorator';
import { SessionIdPipe } from '../http/uuid-or-404.pipe';
import { MessageResponse } from '../sessions/dto/session.response';
import { messageView } from '../sessions/session.presenter';
import { SessionCompactions } from './session-compactions.service';

/** `POST /v1/sessions/:id/compact`: a summary is a model call, so the endpoint sits beside its service in runs/. */
@ApiTags('sessions')
@Controller('v1/sessions')
export class SessionCompactionsController {
  constructor(private readonly compactions: SessionCompactions) {}

  @Post(':id/compact')
  @HttpCode(200)
  @ApiOperation({
    // The id the document has always given it (from when it sat in SessionsController): clients generated from it keep their names.
    operationId: 'SessionsController_compact',
    summary: "Summarize the session's older messages now (everything before its newest prompt's turn)",
  })
  @ApiOkResponse({ type: MessageResponse, description: 'The summary message' })
  @ApiErrors(404, 409, 429)
  async compact(@Owner() owner: string, @Param('id', SessionIdPipe) id: string): Promise<MessageResponse> {
    return messageView(await this.compactions.compact(owner, id));
  }
}
