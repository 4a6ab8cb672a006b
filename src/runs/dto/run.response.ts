import { ApiProperty } from '@nestjs/swagger';
import type { RunStatus } from '../../persistence/entities/run.entity';
import { ApiModelArguments } from '../../sessions/dto/session.response';

export class UsageResponse {
  @ApiProperty()
  promptTokens!: number;

  @ApiProperty()
  completionTokens!: number;

  @ApiProperty({ required: false })
  cacheReadTokens?: number;

  @ApiProperty({ required: false })
  cacheWriteTokens?: number;

  @ApiProperty({ required: false })
  reasoningTokens?: number;

  @ApiProperty({
    required: false,
    description:
      'Present (true) when some of it was estimated (a model call the provider did not report in full)',
  })
  estimated?: boolean;

  @ApiProperty({
    type: Number,
    nullable: true,
    description:
      'USD of the priced model calls (MODEL_PRICES or the built-in table); null when none had a price',
  })
  costUsd!: number | null;
}

export class RunErrorResponse {
  @ApiProperty({ example: 'UPSTREAM_ERROR' })
  code!: string;

  @ApiProperty()
  message!: string;

  @ApiProperty()
  retryable!: boolean;
}

export class PendingToolCallResponse {
  @ApiProperty()
  toolCallId!: string;

  @ApiProperty({
    format: 'uuid',
    description: "The run the call belongs to: this run's, or a child run's below it (decided at either)",
  })
  runId!: string;

  @ApiProperty()
  name!: string;

  @ApiModelArguments()
  arguments!: unknown;

  @ApiProperty({ enum: ['server', 'client'] })
  executor!: 'server' | 'client';

  @ApiProperty({ enum: ['approval', 'result'] })
  waitingFor!: 'approval' | 'result';

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why approval is needed, with the change it would make',
  })
  reason!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  expiresAt!: Date | null;
}

export class RunResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  sessionId!: string;

  @ApiProperty({
    enum: [
      'queued',
      'running',
      'requires_action',
      'completed',
      'max_iterations',
      'cancelled',
      'budget_exceeded',
      'failed',
    ],
  })
  status!: RunStatus;

  @ApiProperty()
  model!: string;

  @ApiProperty({ description: 'Model calls so far' })
  iterations!: number;

  @ApiProperty()
  maxIterations!: number;

  @ApiProperty({ type: UsageResponse })
  usage!: UsageResponse;

  @ApiProperty({ type: [PendingToolCallResponse], description: 'The calls a requires_action run waits for' })
  pendingToolCalls!: PendingToolCallResponse[];

  @ApiProperty({ type: RunErrorResponse, nullable: true })
  error!: RunErrorResponse | null;

  @ApiProperty({ type: String, format: 'date-time' })
  createdAt!: Date;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  finishedAt!: Date | null;
}

export class StreamTokenResponse {
  @ApiProperty({ description: 'Pass as ?token= to GET /v1/runs/{id}/events of this run (and nothing else)' })
  token!: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When the token stops working: 10 minutes after the run ended; null while it runs',
  })
  expiresAt!: Date | null;
}
