/** `running`, `exited` (by itself: `exitCode`), or `stopped` (`stopReason` says by what). */
export type CommandStatus = 'running' | 'exited' | 'stopped';

/** What stopped a background command. */
export type StopReason = 'cancelled' | 'timeout' | 'limit' | 'session' | 'process';

/** One background command as its session's list shows it. */
export interface CommandRecord {
  commandId: string;
  sessionId: string;
  command: string;
  status: CommandStatus;
  exitCode: number | null;
  stopReason: StopReason | null;
  /** The server process that runs (or ran) it. */
  processId: string;
  startedAt: Date;
  endedAt: Date | null;
}

/** Where a renewal found a command this process runs: still its own, or ended by someone else. */
export type RenewedCommand =
  { commandId: string; renewed: true } | { commandId: string; renewed: false; reason: StopReason };

/**
 * The durable list of background commands (a `background_commands` row per command, owned by its
 * session: SQL in store/, wired in by commands/). A running row is leased to the process that runs
 * it, like a run: that process renews the lease while the command runs; a row whose lease lapsed
 * reads as `stopped` by its process, and that process (if it still lives) stops the command at
 * its next renewal.
 */
export interface CommandRecords {
  /**
   * Stores a running command leased to `processId`, unless its session already has `max` running
   * (or the session is gone): one at a time per session, so two calls cannot both take the last place.
   */
  open(row: {
    commandId: string;
    sessionId: string;
    command: string;
    processId: string;
    leaseMs: number;
    max: number;
  }): Promise<'opened' | 'full' | 'no-session'>;
  /** Its end, unless something else ended it first. */
  end(
    commandId: string,
    status: Exclude<CommandStatus, 'running'>,
    exitCode: number | null,
    reason: StopReason | null,
  ): Promise<void>;
  /** Renews the leases of the commands `processId` runs; says of each whether it is still its own. */
  renew(processId: string, commandIds: string[], leaseMs: number): Promise<RenewedCommand[]>;
  /** The session's command, or null (another session's is null too). */
  find(sessionId: string, commandId: string): Promise<CommandRecord | null>;
  /** Marks the session's running command stopped (its process ends it at its next renewal). */
  stop(sessionId: string, commandId: string, reason: StopReason): Promise<boolean>;
  /** Marks stopped every running row leased to `processId`, or whose lease lapsed: at start-up and shutdown. */
  stopLost(processId: string): Promise<number>;
}
