import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { SessionOptionsDto } from '../../sessions/dto/session-options.dto';
import { ON_ACTIVE_VALUES, type OnActive } from '../../runs/start-run';

export class CreateScheduleDto extends SessionOptionsDto {
  @ApiProperty({
    example: '0 9 * * 1-5',
    description: 'Five fields: minute, hour, day of month, month, day of week',
  })
  @IsString()
  @MaxLength(200)
  cron!: string;

  @ApiPropertyOptional({ example: 'Europe/Berlin', description: 'An IANA time zone (default UTC)' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  timezone?: string;

  @ApiProperty({ example: 'Triage the issues opened since yesterday.' })
  @IsString()
  @IsNotEmpty()
  prompt!: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description:
      "Send each run's prompt to this session; without it every run gets a new session with these options",
  })
  @IsOptional()
  @IsUUID()
  sessionId?: string;

  @ApiPropertyOptional({
    enum: ON_ACTIVE_VALUES,
    description:
      'When the session is busy at a due time (default enqueue); a full queue (or reject) skips that due time',
  })
  @IsOptional()
  @IsIn(ON_ACTIVE_VALUES)
  onActive?: OnActive;
}
