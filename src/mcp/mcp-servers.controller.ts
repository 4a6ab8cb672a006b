import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Owner } from '../auth/owner.decorator';
import { McpConnections } from './mcp-connections.service';

@ApiTags('tools')
@Controller('v1/mcp/servers')
export class McpServersController {
  constructor(private readonly connections: McpConnections) {}

  @Get()
  @ApiOperation({
    summary: 'The configured MCP servers: transport, connection status and the tools they offer now',
  })
  list(@Owner() _owner: string) {
    return this.connections.statuses();
  }
}
