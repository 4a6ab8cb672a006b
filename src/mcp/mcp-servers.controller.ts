import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Owner } from '../auth/owner.decorator';
import { McpConnections, type McpServerStatus } from './mcp-connections.service';

const MCP_SERVER_SCHEMA = {
  type: 'object',
  required: ['name', 'transport', 'status', 'tools'],
  properties: {
    name: { type: 'string' },
    transport: { type: 'string', enum: ['stdio', 'http'] },
    status: { type: 'string', enum: ['connecting', 'connected', 'failed'] },
    error: { type: 'string', description: 'Why the last attempt failed or the connection dropped' },
    tools: { type: 'array', items: { type: 'string' }, description: 'The offered <server>__<tool> names' },
  },
};

@ApiTags('tools')
@Controller('v1/mcp/servers')
export class McpServersController {
  constructor(private readonly connections: McpConnections) {}

  @Get()
  @ApiOperation({
    summary: 'The configured MCP servers: transport, connection status and the tools they offer now',
  })
  @ApiOkResponse({
    description: 'Every server of MCP_CONFIG, in its order',
    schema: { type: 'array', items: MCP_SERVER_SCHEMA },
  })
  list(@Owner() _owner: string): McpServerStatus[] {
    return this.connections.statuses();
  }
}
