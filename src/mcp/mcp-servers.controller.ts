import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Owner } from '../auth/owner.decorator';
import { McpConnections, type McpServerStatus } from './mcp-connections.service';
import { McpServerResponse } from './mcp-server.response';

@ApiTags('tools')
@Controller('v1/mcp/servers')
export class McpServersController {
  constructor(private readonly connections: McpConnections) {}

  @Get()
  @ApiOperation({
    summary: 'The configured MCP servers: transport, connection status and the tools they offer now',
  })
  @ApiOkResponse({ description: 'Every server of MCP_CONFIG, in its order', type: [McpServerResponse] })
  list(@Owner() _owner: string): McpServerStatus[] {
    return this.connections.statuses();
  }
}
