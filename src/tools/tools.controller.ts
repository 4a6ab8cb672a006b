import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../http/api-errors.decorator';
import { ToolResponse } from './dto/tool.response';
import { Owner } from '../auth/owner.decorator';
import { DomainError, ErrorCode } from '../common/domain-error';
import type { SessionMode } from '../config/app-config';
import { ToolRegistry } from './tool-registry.service';

const MODES: readonly SessionMode[] = ['safe', 'write', 'exec'];

@ApiTags('tools')
@Controller('v1/tools')
export class ToolsController {
  constructor(private readonly registry: ToolRegistry) {}

  @Get()
  @ApiOperation({
    summary: 'The server tools the model may be offered, with their policy in a mode (default safe)',
  })
  @ApiQuery({ name: 'mode', required: false, enum: MODES })
  @ApiOkResponse({ type: [ToolResponse] })
  @ApiErrors(400)
  list(@Owner() _owner: string, @Query('mode') mode?: string): ToolResponse[] {
    if (mode !== undefined && !MODES.includes(mode as SessionMode)) {
      throw new DomainError(ErrorCode.InvalidRequest, 'mode must be one of safe, write, exec');
    }
    return this.registry.catalog((mode as SessionMode | undefined) ?? 'safe');
  }
}
