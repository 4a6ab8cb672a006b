import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ResponseFormatDto } from './response-format.dto';
import { ClientToolDto } from './session-options.dto';

/** What the answers of the API are made of, for the OpenAPI document (built by session.presenter.ts). */

/** A tool call's arguments as the model sent them: parsed JSON, or the raw text when they were not JSON. */
export function ApiModelArguments(): PropertyDecorator {
  return ApiProperty({
    oneOf: [{ type: 'object', additionalProperties: true }, { type: 'string' }],
    description: "The model's arguments, parsed; the raw text when they were not JSON",
  });
}

export class SessionResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ type: String, nullable: true })
  title!: string | null;

  @ApiPropertyOptional({
    description:
      'In a list: the start of its first prompt (up to 80 characters), to name a session without a title',
  })
  preview?: string;

  @ApiProperty({ type: String, nullable: true, description: "null: the server's default system prompt" })
  systemPrompt!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'null: LLM_MODEL' })
  model!: string | null;

  @ApiProperty({ enum: ['safe', 'write', 'exec'] })
  mode!: 'safe' | 'write' | 'exec';

  @ApiProperty({ type: [String], nullable: true, description: 'null: every tool the mode allows' })
  tools!: string[] | null;

  @ApiProperty({ type: [ClientToolDto] })
  clientTools!: ClientToolDto[];

  @ApiProperty({ type: Number, nullable: true, description: 'null: MAX_ITERATIONS' })
  maxIterations!: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Tokens (prompt + completion) one run may use; null: no limit',
  })
  maxTokens!: number | null;

  @ApiProperty({ type: Number, nullable: true, description: 'USD one run may spend; null: no limit' })
  maxCostUsd!: number | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The end user it belongs to besides the key (X-End-User or endUser); null: none',
  })
  endUser!: string | null;

  @ApiProperty({
    type: String,
    enum: ['off', 'low', 'medium', 'high'],
    nullable: true,
    description: 'null: LLM_REASONING',
  })
  reasoning!: 'off' | 'low' | 'medium' | 'high' | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The named agent it started from (GET /v1/agents)',
  })
  agent!: string | null;

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: "A child session (a delegate call's): its parent session; null for a client's",
  })
  parentSessionId!: string | null;

  @ApiPropertyOptional({ type: ResponseFormatDto, description: 'Present when the session has one' })
  responseFormat?: ResponseFormatDto;

  @ApiProperty({ type: String, format: 'date-time' })
  createdAt!: Date;

  @ApiProperty({ type: String, format: 'date-time' })
  updatedAt!: Date;
}

export class SessionPageResponse {
  @ApiProperty({ type: [SessionResponse] })
  data!: SessionResponse[];

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass as ?cursor= for the next page; null on the last',
  })
  nextCursor!: string | null;
}

export class MessageToolCallResponse {
  @ApiProperty()
  id!: string;

  @ApiProperty()
  name!: string;

  @ApiModelArguments()
  arguments!: unknown;
}

export class SummarizedSpanResponse {
  @ApiProperty({ format: 'uuid' })
  fromId!: string;

  @ApiProperty({ format: 'uuid' })
  toId!: string;
}

export class MessagePartResponse {
  @ApiProperty({ enum: ['text', 'file'] })
  type!: 'text' | 'file';

  @ApiPropertyOptional({ description: 'A text part' })
  text?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'A file part: the file (GET /v1/files/:id)' })
  fileId?: string;

  @ApiPropertyOptional({ description: "A file part: the file's name" })
  name?: string;

  @ApiPropertyOptional({ description: "A file part: the file's type" })
  mediaType?: string;

  @ApiPropertyOptional({ enum: [true], description: 'A file part whose file was deleted since' })
  deleted?: true;
}

export class MessageResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: ['system', 'user', 'assistant', 'tool'] })
  role!: 'system' | 'user' | 'assistant' | 'tool';

  @ApiProperty({ type: String, nullable: true })
  content!: string | null;

  @ApiPropertyOptional({
    type: [MessagePartResponse],
    description:
      'A user message whose prompt had files: its parts in order (content is its text parts joined by a blank line)',
  })
  parts?: MessagePartResponse[];

  @ApiPropertyOptional({
    type: [MessageToolCallResponse],
    description: 'An assistant message that called tools',
  })
  toolCalls?: MessageToolCallResponse[];

  @ApiPropertyOptional({ description: 'A tool message: the call it answers' })
  toolCallId?: string;

  @ApiPropertyOptional({
    description: "An assistant message: the model's visible reasoning (never its content)",
  })
  reasoning?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'The run that wrote it (the system message has none)' })
  runId?: string;

  @ApiPropertyOptional({
    enum: ['summary'],
    description: 'A summary standing in for older messages (role system)',
  })
  kind?: 'summary';

  @ApiPropertyOptional({
    type: SummarizedSpanResponse,
    description: 'A summary: the first and the last message it stands in for',
  })
  summarizes?: SummarizedSpanResponse;

  @ApiPropertyOptional({
    enum: ['pruned', 'summarized'],
    description:
      'What the model no longer gets in full: `pruned`, a stub in place of this tool result; `summarized`, nothing (a summary stands in for it)',
  })
  context?: 'pruned' | 'summarized';

  @ApiProperty({ type: String, format: 'date-time' })
  createdAt!: Date;
}

export class SessionDetailResponse extends SessionResponse {
  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The running or waiting run, to follow with GET /v1/runs/:id/events',
  })
  activeRunId!: string | null;

  @ApiProperty({ type: [MessageResponse], description: 'In order, the system message first' })
  messages!: MessageResponse[];
}

export class FileChangeResponse {
  @ApiProperty()
  toolCallId!: string;

  @ApiProperty({ format: 'uuid' })
  runId!: string;

  @ApiProperty()
  tool!: string;

  @ApiProperty({ description: 'Relative to the workspace' })
  path!: string;

  @ApiProperty({ type: String, nullable: true, description: 'null: the file did not exist' })
  beforeSha256!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'null: the file was deleted' })
  afterSha256!: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  at!: Date;
}
