import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString, Matches } from 'class-validator';

/** `responseFormat` ("Structured output"): the run's final answer is JSON valid against `schema`. */
export class ResponseFormatDto {
  @ApiProperty({ enum: ['json_schema'] })
  @IsIn(['json_schema'])
  type!: 'json_schema';

  @ApiPropertyOptional({
    example: 'review',
    description: "Sent to providers that name formats; [a-zA-Z0-9_-]{1,64}; the server's own when absent",
  })
  @IsOptional()
  @IsString()
  @Matches(/^[a-zA-Z0-9_-]{1,64}$/, { message: 'name must be 1–64 letters, digits, _ or -' })
  name?: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'A JSON Schema whose root "type" is "object"; at most 64 KiB, 64 levels deep, no $ref outside itself',
  })
  @IsObject()
  schema!: Record<string, unknown>;
}
