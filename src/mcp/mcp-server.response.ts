import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** One server of MCP_CONFIG in GET /v1/mcp/servers. */
export class McpServerResponse {
  @ApiProperty()
  name!: string;

  @ApiProperty({ enum: ['stdio', 'http'] })
  transport!: 'stdio' | 'http';

  @ApiProperty({ enum: ['connecting', 'connected', 'failed'] })
  status!: 'connecting' | 'connected' | 'failed';

  @ApiPropertyOptional({ description: 'Why the last attempt failed or the connection dropped' })
  error?: string;

  @ApiProperty({ type: [String], description: 'The offered <server>__<tool> names' })
  tools!: string[];
}
