import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Owner } from '../auth/owner.decorator';
import { ApiErrors } from '../http/api-errors.decorator';
import { Agents } from './agents.service';
import { AgentResponse } from './dto/agent.response';

@ApiTags('agents')
@Controller('v1/agents')
export class AgentsController {
  constructor(private readonly agents: Agents) {}

  @Get()
  @ApiOperation({ summary: 'The named agents of AGENTS_CONFIG a session may use and a run may delegate to' })
  @ApiOkResponse({ type: [AgentResponse] })
  @ApiErrors()
  list(@Owner() _owner: string): AgentResponse[] {
    return this.agents.list();
  }
}
