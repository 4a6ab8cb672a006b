import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, IsUUID } from 'class-validator';
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
}
