import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/** POST /v1/runs/:id/replay: recorded entirely, or recorded up to a step and live after it. */
export class ReplayRunDto {
  @ApiPropertyOptional({
    minimum: 1,
    description: "Steps 1…fromStep are recorded, the rest live (1 … the run's steps); default: all recorded",
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100_000)
  fromStep?: number;

  @ApiPropertyOptional({ description: 'The model of the live steps (`provider/model`); only with fromStep' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  model?: string;
}

export class ReplayResponse {
  @ApiProperty({ format: 'uuid', description: 'The new run (follow it with GET /v1/runs/:id/events)' })
  runId!: string;

  @ApiProperty({ format: 'uuid', description: 'The fork of the run’s session it runs in' })
  sessionId!: string;
}
