import { ApiProperty } from '@nestjs/swagger';

export class ToolResponse {
  @ApiProperty()
  name!: string;

  @ApiProperty()
  description!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'JSON Schema of the arguments' })
  parameters!: Record<string, unknown>;

  @ApiProperty({ enum: ['allow', 'confirm', 'deny'], description: 'In the mode asked for' })
  policy!: 'allow' | 'confirm' | 'deny';

  @ApiProperty({ example: 'builtin', description: '`builtin` or `mcp:<server>`' })
  source!: string;
}
