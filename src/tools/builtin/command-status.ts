import type { CommandStatus, StopReason } from '../exec/command-records';
import type { ToolResult } from '../tool';

const STOPPED_BY: Readonly<Record<StopReason, string>> = {
  cancelled: 'a cancel',
  timeout: 'its time limit',
  limit: 'a limit (memory, processes, file size or CPU time)',
  session: 'the deletion of its session',
  process: 'the end of its server process',
};

/** `running`, `exited with code 0`, or `stopped by a cancel`: what get_command_output and cancel_command say. */
export function describeCommandStatus(c: {
  status: CommandStatus;
  exitCode: number | null;
  stopReason: StopReason | null;
}): string {
  switch (c.status) {
    case 'running':
      return 'Status: running';
    case 'exited':
      return `Status: exited with code ${c.exitCode ?? 'unknown'}`;
    case 'stopped':
      return `Status: stopped by ${STOPPED_BY[c.stopReason ?? 'cancelled']}, with everything it started`;
  }
}

/** Another session's command is answered exactly as one that never existed. */
export function unknownCommand(commandId: string): ToolResult {
  return {
    content: `There is no background command ${commandId} in this session. Use the commandId that run_command with background: true answered with.`,
    isError: true,
    errorCode: 'NOT_FOUND',
  };
}
