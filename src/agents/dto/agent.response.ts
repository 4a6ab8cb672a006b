import { ApiProperty } from '@nestjs/swagger';

/** One named agent of AGENTS_CONFIG, as GET /v1/agents shows it: its defaults filled in. */
export class AgentResponse {
  @ApiProperty({ example: 'reviewer', description: '[A-Za-z0-9_-]{1,64}; what `agent` names' })
  name!: string;

  @ApiProperty({ description: 'What it is for (the model reads it in the delegate tool)' })
  description!: string;

  @ApiProperty({
    example: 'openai/gpt-4.1-mini',
    description: 'provider/model (LLM_MODEL when it names none)',
  })
  model!: string;

  @ApiProperty({ enum: ['safe', 'write', 'exec'] })
  mode!: 'safe' | 'write' | 'exec';

  @ApiProperty({
    type: [String],
    description: 'The tools it may use (all its mode allows when it names none)',
  })
  tools!: string[];
}
