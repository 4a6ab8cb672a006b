import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, IsUUID } from 'class-validator';
import { ON_ACTIVE_VALUES, type OnActive } from '../start-run';
import { SessionOptionsDto } from '../../sessions/dto/session-options.dto';

export class CreateChatDto extends SessionOptionsDto {
  @ApiProperty({ example: 'What is in README.md?' })
  @IsString()
  @IsNotEmpty()
  prompt!: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Continue this session; without it a session is created',
  })
  @IsOptional()
  @IsUUID()
  sessionId?: string;
  @ApiPropertyOptional({
    enum: ON_ACTIVE_VALUES,
    default: 'reject',
    description:
      'When the session has an active run: reject (409), enqueue (the stream begins with queued and goes on when the runs before it ended), interrupt (the active run is cancelled, this one starts)',
  })
  @IsOptional()
  @IsIn(ON_ACTIVE_VALUES)
  onActive?: OnActive;
}
