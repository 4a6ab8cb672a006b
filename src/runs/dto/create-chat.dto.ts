import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsUUID } from 'class-validator';
import type { PromptInput } from '../../files/prompt-parts';
import { ApiPrompt } from './prompt.dto';
import { SessionOptionsDto } from '../../sessions/dto/session-options.dto';

export class CreateChatDto extends SessionOptionsDto {
  @ApiPrompt('What is in README.md?')
  prompt!: PromptInput;

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Continue this session; without it a session is created',
  })
  @IsOptional()
  @IsUUID()
  sessionId?: string;
}
