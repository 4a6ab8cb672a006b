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

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'The end user (groupBy=endUser); null for use without an end user',
  })
  endUser?: string | null;

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

export class UsageLimitResponse {
  @ApiProperty({ description: 'The limit, e.g. `alice/bob: 5 usd per day (BUDGETS)`' })
  limit!: string;

  @ApiProperty({ enum: ['hour', 'day', 'month'], description: 'Its window (UTC)' })
  window!: 'hour' | 'day' | 'month';

  @ApiProperty({
    description: 'Used in the current window by calls that ended (USD or tokens, as the limit)',
  })
  used!: number;

  @ApiProperty({ description: 'What is left now, less what calls in flight have reserved' })
  left!: number;
}

export class UsageListResponse {
  @ApiProperty({ type: [UsageEntryResponse] })
  data!: UsageEntryResponse[];

  @ApiProperty({
    type: [UsageLimitResponse],
    description: "Each limit that applies to the caller (its key's, its end user's with X-End-User)",
  })
  limits!: UsageLimitResponse[];
}
