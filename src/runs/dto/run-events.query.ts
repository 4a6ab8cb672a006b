import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';

export class RunEventsQuery {
  @ApiPropertyOptional({
    description: 'Replay events after this seq (same as the Last-Event-ID header)',
    example: '0',
  })
  @IsOptional()
  @Matches(/^\d{1,9}$/, { message: 'after must be a whole number' })
  after?: string;

  @ApiPropertyOptional({
    description:
      'A stream token of this run (POST /v1/runs/{id}/stream-token), for clients that cannot send an Authorization header',
  })
  @IsOptional()
  @IsString()
  token?: string;
}
