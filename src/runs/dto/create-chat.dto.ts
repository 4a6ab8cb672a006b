import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID } from 'class-validator';
import type { PromptInput } from '../../files/prompt-parts';
import { SessionOptionsDto } from '../../sessions/dto/session-options.dto';
import { ON_ACTIVE_VALUES, type OnActive } from '../start-run';
import { ApiPrompt } from './prompt.dto';

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

  @ApiPropertyOptional({
    enum: ON_ACTIVE_VALUES,
    description:
      'When the session has an active run: reject (409, the default), enqueue (the stream begins with queued and goes on when the runs before it ended), interrupt (the active run is cancelled, this one starts)',
  })
  @IsOptional()
  @IsIn(ON_ACTIVE_VALUES)
  onActive?: OnActive;
}
