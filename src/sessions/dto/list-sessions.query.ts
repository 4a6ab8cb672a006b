import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { END_USER_PATTERN } from '../../auth/end-user';

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

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 200,
    description: "Only this end user's sessions (with X-End-User, naming another answers none)",
  })
  @IsOptional()
  @Matches(END_USER_PATTERN, { message: 'endUser must be 1–200 printable ASCII characters' })
  endUser?: string;
}
