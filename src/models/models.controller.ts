import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Owner } from '../auth/owner.decorator';
import { ApiErrors } from '../http/api-errors.decorator';
import { fullModelName } from '../llm/model-name';
import { ModelProviders } from '../llm/model-providers.service';
import { ModelsResponse } from './dto/models.response';

@ApiTags('models')
@Controller('v1/models')
export class ModelsController {
  constructor(private readonly providers: ModelProviders) {}

  @Get()
  @ApiOperation({ summary: 'The default model and the configured model providers a session may name' })
  @ApiOkResponse({ type: ModelsResponse })
  @ApiErrors()
  list(@Owner() _owner: string): ModelsResponse {
    return { default: fullModelName(this.providers.defaultModel), providers: this.providers.list() };
  }
}
