import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class UsageEntryResponse {
  @ApiPropertyOptional({ description: 'The UTC day, YYYY-MM-DD (groupBy=day)' })
  day?: string;

  @ApiPropertyOptional({ description: 'The provider/model that answered (groupBy=model)' })
  model?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'groupBy=session' })
  sessionId?: string;

  @ApiPropertyOptional({ description: 'The key name (groupBy=key, admin keys only)' })
  key?: string;

  @ApiProperty({ description: 'Runs with model calls in the group' })
  runs!: number;

  @ApiProperty()
  promptTokens!: number;

  @ApiProperty()
  completionTokens!: number;

  @ApiProperty()
  cacheReadTokens!: number;

  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'USD of the priced calls; null when none had a price',
  })
  costUsd!: number | null;
}

export class UsageListResponse {
  @ApiProperty({ type: [UsageEntryResponse] })
  data!: UsageEntryResponse[];
}
