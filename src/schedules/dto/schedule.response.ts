import { ApiProperty } from '@nestjs/swagger';

/** What the schedule answers are made of, for the OpenAPI document (built by schedule.presenter.ts). */
export class ScheduleResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ example: '0 9 * * 1-5' })
  cron!: string;

  @ApiProperty({ example: 'UTC' })
  timezone!: string;

  @ApiProperty()
  prompt!: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'null: a new session each run' })
  sessionId!: string | null;

  @ApiProperty()
  enabled!: boolean;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'null while disabled' })
  nextRunAt!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class SchedulePageResponse {
  @ApiProperty({ type: [ScheduleResponse] })
  data!: ScheduleResponse[];

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass as cursor for the next page; null on the last',
  })
  nextCursor!: string | null;
}

export class ScheduleRunResponse {
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'null for a skipped due time' })
  runId!: string | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  sessionId!: string | null;

  @ApiProperty({ description: "The run's status now; skipped (the session was busy and its queue full)" })
  status!: string;

  @ApiProperty({ format: 'date-time' })
  dueAt!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  startedAt!: string | null;
}

export class ScheduleRunListResponse {
  @ApiProperty({ type: [ScheduleRunResponse], description: 'Newest due time first (the last 100)' })
  data!: ScheduleRunResponse[];
}
