import { ApiProperty } from '@nestjs/swagger';

/** One background command of a session (GET /v1/sessions/:id/commands). */
export class BackgroundCommandResponse {
  @ApiProperty({ format: 'uuid' })
  commandId!: string;

  @ApiProperty({ description: 'The command line as run_command got it' })
  command!: string;

  @ApiProperty({
    enum: ['running', 'exited', 'stopped'],
    description: '`stopped`: by a cancel, a limit, its timeout, its session or its server process',
  })
  status!: 'running' | 'exited' | 'stopped';

  @ApiProperty({ type: Number, nullable: true, description: 'null while it runs, and when it was stopped' })
  exitCode!: number | null;

  @ApiProperty({ type: String, format: 'date-time' })
  startedAt!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'null while it runs' })
  endedAt!: string | null;
}
