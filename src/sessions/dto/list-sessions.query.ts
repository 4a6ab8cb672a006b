import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

export class ListSessionsQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 100, description: 'Sessions per page (default 20)' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page' })
  @IsOptional()
  @IsString()
  cursor?: string;

  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description: "true: list child sessions (a delegation's) too (default false)",
  })
  @IsOptional()
  @IsIn(['true', 'false'])
  children?: 'true' | 'false';
}
