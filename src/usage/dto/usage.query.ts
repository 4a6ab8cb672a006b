import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsOptional, Matches } from 'class-validator';
import { END_USER_PATTERN } from '../../auth/end-user';
import type { UsageGrouping } from '../../store/usage-store.service';

export class UsageQuery {
  @ApiPropertyOptional({
    format: 'date-time',
    description: 'ISO 8601, inclusive (default: 30 days before `to`)',
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'ISO 8601, exclusive (default: now)' })
  @IsOptional()
  @IsISO8601({ strict: true })
  to?: string;

  @ApiPropertyOptional({
    enum: ['day', 'model', 'session', 'endUser', 'key'],
    description: 'Default day (UTC); `key` only for an ADMIN_KEYS key',
  })
  @IsOptional()
  @IsIn(['day', 'model', 'session', 'endUser', 'key'])
  groupBy?: UsageGrouping;

  @ApiPropertyOptional({
    description: "Only this end user's use (with X-End-User, naming another answers nothing)",
    minLength: 1,
    maxLength: 200,
  })
  @IsOptional()
  @Matches(END_USER_PATTERN)
  endUser?: string;
}
