import { ApiProperty } from '@nestjs/swagger';

export class ModelProviderResponse {
  @ApiProperty({ description: 'The prefix of its models: openai, openai-responses, anthropic' })
  name!: string;

  @ApiProperty({ description: 'Where its requests go' })
  baseUrl!: string;
}

export class ModelsResponse {
  @ApiProperty({ description: 'LLM_MODEL as provider/model: the model of a session that names none' })
  default!: string;

  @ApiProperty({ type: [ModelProviderResponse], description: 'The configured providers' })
  providers!: ModelProviderResponse[];
}
