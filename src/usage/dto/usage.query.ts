import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsOptional } from 'class-validator';
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
    enum: ['day', 'model', 'session', 'key'],
    description: 'Default day (UTC); `key` only for an ADMIN_KEYS key',
  })
  @IsOptional()
  @IsIn(['day', 'model', 'session', 'key'])
  groupBy?: UsageGrouping;
}
