import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsObject, IsOptional, ValidateNested } from 'class-validator';
import type { PromptInput } from '../../files/prompt-parts';
import { ResponseFormatDto } from '../../sessions/dto/response-format.dto';
import { ON_ACTIVE_VALUES, type OnActive } from '../start-run';
import { ApiPrompt } from './prompt.dto';

export class CreateMessageDto {
  @ApiPrompt('And what does it say about testing?')
  content!: PromptInput;

  @ApiPropertyOptional({
    enum: ON_ACTIVE_VALUES,
    description:
      'When the session has an active run: reject (409, the default), enqueue (the stream begins with queued and goes on when the runs before it ended), interrupt (the active run is cancelled, this one starts)',
  })
  @IsOptional()
  @IsIn(ON_ACTIVE_VALUES)
  onActive?: OnActive;

  @ApiPropertyOptional({
    type: ResponseFormatDto,
    description:
      "This run's final answer as JSON valid against a schema, over the session's (Structured output)",
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => ResponseFormatDto)
  @IsObject()
  responseFormat?: ResponseFormatDto;
}
