import type { PromptInput } from '../../files/prompt-parts';
import { ApiPrompt } from './prompt.dto';

export class CreateMessageDto {
  @ApiPrompt('And what does it say about testing?')
  content!: PromptInput;
}
