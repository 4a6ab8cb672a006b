import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Owner } from '../auth/owner.decorator';
import { ApiErrors } from '../http/api-errors.decorator';
import { SessionsService } from '../sessions/sessions.service';
import { ModelsResponse } from './dto/models.response';

@ApiTags('models')
@Controller('v1/models')
export class ModelsController {
  constructor(private readonly sessions: SessionsService) {}

  @Get()
  @ApiOperation({ summary: 'The default model and the configured model providers a session may name' })
  @ApiOkResponse({ type: ModelsResponse })
  @ApiErrors()
  list(@Owner() _owner: string): ModelsResponse {
    return this.sessions.models();
  }
}
