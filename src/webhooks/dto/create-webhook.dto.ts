import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
} from 'class-validator';
import { WEBHOOK_EVENT_TYPES } from '../../store/webhook-store.service';
import { WEBHOOK_URL_MAX_LENGTH } from '../webhook-address';
import { WEBHOOK_SECRET_MAX_LENGTH } from '../webhook-secret';

/** What a webhook may ask to be told: an event type, or `*` for all. */
export const WEBHOOK_EVENT_CHOICES = [...WEBHOOK_EVENT_TYPES, '*'] as const;

export class CreateWebhookDto {
  @ApiProperty({
    maxLength: WEBHOOK_URL_MAX_LENGTH,
    description: 'http:// or https://; not a loopback, private or link-local address (WEBHOOK_ALLOW_PRIVATE)',
    example: 'https://example.com/hooks/loopwright',
  })
  @IsString()
  @MaxLength(WEBHOOK_URL_MAX_LENGTH)
  url!: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...WEBHOOK_EVENT_CHOICES] },
    minItems: 1,
    maxItems: WEBHOOK_EVENT_CHOICES.length,
    description: '`run.completed` (status completed or max_iterations), … or ["*"] for every event',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENT_CHOICES.length)
  @IsIn(WEBHOOK_EVENT_CHOICES, { each: true })
  events!: string[];

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: WEBHOOK_SECRET_MAX_LENGTH,
    description:
      'Signing key: `whsec_` + base64 (the key is the decoded bytes), or any other text (its UTF-8 bytes). Generated when left out.',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(WEBHOOK_SECRET_MAX_LENGTH)
  secret?: string;
}
