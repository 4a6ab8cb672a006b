import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsArray,
  IsIn,
  IsInt,
  IsNumber,
  IsPositive,
  Max,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { END_USER_PATTERN } from '../../auth/end-user';
import type { ReasoningLevel, SessionMode } from '../../config/app-config';
import { ResponseFormatDto } from './response-format.dto';

export class ClientFunctionDto {
  @ApiProperty({
    example: 'get_location',
    description: 'Unique among server and client tools; [a-zA-Z0-9_-]{1,64}',
  })
  @IsString()
  @Matches(/^[a-zA-Z0-9_-]{1,64}$/, { message: 'name must be 1–64 letters, digits, _ or -' })
  name!: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  description?: string;

  @ApiPropertyOptional({
    description: 'JSON Schema of the arguments (an object schema)',
    type: 'object',
    additionalProperties: true,
  })
  @IsOptional()
  @IsObject()
  parameters?: Record<string, unknown>;
}

export class ClientToolDto {
  @ApiProperty({ enum: ['function'] })
  @IsIn(['function'])
  type!: 'function';

  @ApiProperty({ type: ClientFunctionDto })
  @ValidateNested()
  @Type(() => ClientFunctionDto)
  @IsObject()
  function!: ClientFunctionDto;
}

/** SessionOptions of the contract: every field optional. */
export class SessionOptionsDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  title?: string;

  @ApiPropertyOptional({ description: "Replaces the server's default system prompt" })
  @IsOptional()
  @IsString()
  @MinLength(1)
  systemPrompt?: string;

  @ApiPropertyOptional({
    maxLength: 200,
    description:
      'provider/model (openai, openai-responses, anthropic; a bare name is openai/<name>); defaults to LLM_MODEL; see GET /v1/models',
  })
  // Real names are under 100 characters (the longest, a router's `openai/vendor/model:variant`, ~80);
  // 200 leaves room for them while keeping a name that lands in span names, logs and every stored
  // run row small.
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  model?: string;

  // The default goes in the description: openapi-typescript makes a field with a `default` required.
  @ApiPropertyOptional({
    enum: ['safe', 'write', 'exec'],
    description: 'What the session may do (default safe)',
  })
  @IsOptional()
  @IsIn(['safe', 'write', 'exec'])
  mode?: SessionMode;

  @ApiPropertyOptional({
    type: [String],
    description: 'Server tools this session may use; default all the mode allows',
  })
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  tools?: string[];

  @ApiPropertyOptional({ type: [ClientToolDto], description: 'Tools the client executes' })
  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ClientToolDto)
  clientTools?: ClientToolDto[];

  @ApiPropertyOptional({ minimum: 1, description: 'At most MAX_ITERATIONS' })
  @IsOptional()
  @IsInt()
  @Min(1)
  maxIterations?: number;

  @ApiPropertyOptional({
    minimum: 1,
    description:
      'The most tokens (prompt + completion) each run may use; its next model call is not made once reached',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(2_147_483_647)
  maxTokens?: number;

  @ApiPropertyOptional({
    exclusiveMinimum: true,
    minimum: 0,
    description:
      'The most USD each run may spend (priced models only); its next model call is not made once reached',
  })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @IsPositive()
  maxCostUsd?: number;

  @ApiPropertyOptional({
    enum: ['off', 'low', 'medium', 'high'],
    description: 'How hard models that can reason are asked to (default LLM_REASONING)',
  })
  @IsOptional()
  @IsIn(['off', 'low', 'medium', 'high'])
  reasoning?: ReasoningLevel;

  @ApiPropertyOptional({
    maxLength: 64,
    description:
      'A named agent (GET /v1/agents): the session starts from its settings, these options override them',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  agent?: string;

  @ApiPropertyOptional({
    type: ResponseFormatDto,
    description:
      "The final answer as JSON valid against a schema (Structured output): the session's for every run; sent with a prompt, that run's only",
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => ResponseFormatDto)
  @IsObject()
  responseFormat?: ResponseFormatDto;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 200,
    description:
      'The end user the session belongs to besides the key (1–200 printable ASCII characters); as X-End-User, which it must not disagree with',
  })
  @IsOptional()
  @IsString()
  @Matches(END_USER_PATTERN, { message: 'endUser must be 1–200 printable ASCII characters' })
  endUser?: string;
}
