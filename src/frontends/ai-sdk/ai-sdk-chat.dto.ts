import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayNotEmpty, IsArray, IsIn, IsObject, IsOptional, IsString, Length } from 'class-validator';
import { SessionOptionsDto } from '../../sessions/dto/session-options.dto';

/** The body the AI SDK's DefaultChatTransport sends, plus SessionOptions for a new chat. */
export class AiSdkChatDto extends SessionOptionsDto {
  @ApiProperty({ minLength: 1, maxLength: 200, description: 'The chat id; names one session of the key' })
  @IsString()
  @Length(1, 200)
  id!: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: 'UIMessage[]; only the last one is read',
  })
  @IsArray()
  @ArrayNotEmpty()
  @IsObject({ each: true })
  messages!: Record<string, unknown>[];

  @ApiProperty({ enum: ['submit-message', 'regenerate-message'] })
  @IsIn(['submit-message', 'regenerate-message'])
  trigger!: 'submit-message' | 'regenerate-message';

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  messageId?: string;
}
