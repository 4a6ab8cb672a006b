import { Module } from '@nestjs/common';
import { ToolsModule } from '../tools/tools.module';
import { McpConnections } from './mcp-connections.service';
import { McpServersController } from './mcp-servers.controller';

/** MCP servers (MCP_CONFIG) as sources of tools, and GET /v1/mcp/servers. */
@Module({
  imports: [ToolsModule],
  controllers: [McpServersController],
  providers: [McpConnections],
})
export class McpModule {}
