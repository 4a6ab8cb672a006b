import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { constants } from 'node:os';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { ServerProcess } from '../../common/server-process.service';
import type { LimitHit } from './command-limits';
import type { CommandRecord, CommandRecords, CommandStatus, StopReason } from './command-records';
import { HeadTailCollector } from './head-tail-collector';
import type { KeptOutput } from './command-output';
import { runInProcessGroup, type ProcessGroupExit } from './process-group';

/** How one background command runs: its command line (a sandbox around it) and its environment. */
export interface BackgroundLaunch {
  sessionId: string;
  command: string;
  argv?: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  timeoutMs: number;
  /** After it ended: which limit stopped it, and the removal of its control group. */
  finishLimits(): LimitHit;
}

/** A command this process runs or ran, with what it kept of its output. */
export interface LocalCommand {
  readonly commandId: string;
  readonly sessionId: string;
  readonly command: string;
  status: CommandStatus;
  exitCode: number | null;
  stopReason: StopReason | null;
  readonly timeoutMs: number;
  output(): KeptOutput;
}

/** A command's output: its first bytes and its newest, up to these many (the rest is dropped between). */
export const BACKGROUND_HEAD_BYTES = 64 * 1024;
export const BACKGROUND_TAIL_BYTES = 448 * 1024;
/** Ended commands whose output this process keeps for get_command_output, the oldest forgotten first. */
const ENDED_KEPT = 64;
const KILL_GRACE_MS = 1000;
/**
 * How long a shutdown waits for its commands to end once told to stop (SIGTERM, SIGKILL after
 * KILL_GRACE_MS): past it, the shutdown goes on without them — their rows are marked stopped, and
 * a lapsed lease reads as stopped anyway. A server must be able to stop.
 */
const SHUTDOWN_WAIT_MS = 10_000;
/** A commandId is a uuid: anything else names no command (and never reaches a uuid column). */
const COMMAND_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** setTimeout's longest delay: a longer RUN_COMMAND_MAX_TIMEOUT_MS would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Running extends LocalCommand {
  stop(reason: StopReason): void;
  readonly done: Promise<void>;
}

/**
 * The background commands this process runs (`run_command` with `background: true`): each in its
 * sandbox, in its own process group, until it exits, its timeout, a cancel, its session's deletion,
 * or this process's end. Their list is durable (CommandRecords): every running row is leased to
 * this process and renewed with the run leases' period; a row that another process stopped (a
 * cancel), that went with its session, or whose lease lapsed ends the command here.
 */
@Injectable()
export class BackgroundCommands implements BeforeApplicationShutdown {
  private readonly logger = new Logger(BackgroundCommands.name);
  private readonly running = new Map<string, Running>();
  /** Ended commands, oldest first (a Map keeps insertion order). */
  private readonly ended = new Map<string, LocalCommand>();
  private records: CommandRecords | null = null;
  private renewal: NodeJS.Timeout | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly process: ServerProcess,
  ) {}

  /** Where the list is kept (commands/ wires the store in at start-up); marks what lost processes left running stopped. */
  async keepRecordsIn(records: CommandRecords): Promise<void> {
    this.records = records;
    await records.stopLost(this.process.id);
  }

  get available(): boolean {
    return this.records !== null;
  }

  /** Starts one; `full` when its session already runs RUN_COMMAND_MAX_BACKGROUND of them. */
  async start(launch: BackgroundLaunch): Promise<{ commandId: string } | 'full' | 'no-session'> {
    const records = this.requireRecords();
    const commandId = randomUUID();
    const opened = await records
      .open({
        commandId,
        sessionId: launch.sessionId,
        command: launch.command,
        processId: this.process.id,
        leaseMs: this.config.runLeaseMs,
        max: this.config.runCommandMaxBackground,
      })
      .catch((err: unknown) => {
        launch.finishLimits();
        throw err;
      });
    if (opened !== 'opened') {
      launch.finishLimits();
      return opened;
    }
    this.launch(commandId, launch);
    return { commandId };
  }

  /** The session's command: this process's own (with its output), or only its record, or null. */
  async find(
    sessionId: string,
    commandId: string,
  ): Promise<{ local: LocalCommand | null; record: CommandRecord } | null> {
    if (!COMMAND_ID.test(commandId)) return null;
    const record = await this.requireRecords().find(sessionId, commandId);
    if (record === null) return null;
    const local = this.running.get(commandId) ?? this.ended.get(commandId) ?? null;
    return { local: local?.sessionId === sessionId ? local : null, record };
  }

  /** Stops the session's command with everything it started; false when it was not running. */
  async cancel(sessionId: string, commandId: string): Promise<boolean> {
    const local = this.running.get(commandId);
    if (local?.sessionId === sessionId) {
      local.stop('cancelled');
      await local.done;
      return true;
    }
    // Another process runs it: the row says so, and that process ends it at its next renewal.
    return this.requireRecords().stop(sessionId, commandId, 'cancelled');
  }

  /** The session was deleted (its rows went with it): its commands end, their output is forgotten. */
  async sessionDeleted(sessionId: string): Promise<void> {
    const mine = [...this.running.values()].filter((c) => c.sessionId === sessionId);
    for (const command of mine) command.stop('session');
    await Promise.all(mine.map((c) => c.done));
    for (const [id, command] of this.ended) if (command.sessionId === sessionId) this.ended.delete(id);
  }

  /** Shutdown: every command of this process ends (a command never outlives its process). */
  async beforeApplicationShutdown(): Promise<void> {
    const all = [...this.running.values()];
    for (const command of all) command.stop('process');
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      Promise.all(all.map((c) => c.done)).then(() => true),
      new Promise<false>((done) => {
        timer = setTimeout(() => done(false), SHUTDOWN_WAIT_MS);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    if (!waited) {
      const left = all.filter((c) => this.running.has(c.commandId)).map((c) => c.commandId);
      this.logger.warn(`shutting down without waiting longer for background commands ${left.join(', ')}`);
    }
    if (this.renewal !== null) clearInterval(this.renewal);
    this.renewal = null;
    await this.records?.stopLost(this.process.id).catch((err: unknown) => {
      // The database may already be gone: the rows' leases lapse and read as stopped anyway.
      this.logger.warn(`could not mark this process's background commands stopped: ${String(err)}`);
    });
  }

  private launch(commandId: string, launch: BackgroundLaunch): void {
    const output = new HeadTailCollector(BACKGROUND_HEAD_BYTES, BACKGROUND_TAIL_BYTES);
    const abort = new AbortController();
    let stopReason: StopReason | null = null;
    const stop = (reason: StopReason): void => {
      if (abort.signal.aborted) return;
      stopReason = reason;
      abort.abort();
    };
    const timer = setTimeout(() => stop('timeout'), Math.min(launch.timeoutMs, MAX_TIMER_MS));
    timer.unref();
    const command: Running = {
      commandId,
      sessionId: launch.sessionId,
      command: launch.command,
      status: 'running',
      exitCode: null,
      stopReason: null,
      timeoutMs: launch.timeoutMs,
      output: () => output.kept(),
      stop,
      done: runInProcessGroup({
        command: launch.command,
        argv: launch.argv,
        cwd: launch.cwd,
        env: launch.env,
        signal: abort.signal,
        killGraceMs: KILL_GRACE_MS,
        onOutput: (_stream, data) => output.push(data),
      })
        .then((exit) => {
          const limitHit = launch.finishLimits();
          return this.settle(command, ending(exit, limitHit, stopReason));
        })
        .catch((err: unknown) => {
          launch.finishLimits();
          output.push(Buffer.from(`could not start the command: ${String(err)}\n`));
          return this.settle(command, { status: 'exited', exitCode: 127, reason: null });
        })
        .finally(() => clearTimeout(timer)),
    };
    this.running.set(commandId, command);
    this.scheduleRenewal();
  }

  private async settle(
    command: Running,
    end: { status: Exclude<CommandStatus, 'running'>; exitCode: number | null; reason: StopReason | null },
  ): Promise<void> {
    command.status = end.status;
    command.exitCode = end.exitCode;
    command.stopReason = end.reason;
    this.running.delete(command.commandId);
    this.ended.set(command.commandId, command);
    while (this.ended.size > ENDED_KEPT) this.ended.delete(this.ended.keys().next().value as string);
    if (this.running.size === 0 && this.renewal !== null) {
      clearInterval(this.renewal);
      this.renewal = null;
    }
    await this.records?.end(command.commandId, end.status, end.exitCode, end.reason).catch((err: unknown) => {
      // Its lease lapses instead, and the row reads as stopped by its process.
      this.logger.warn(`could not record the end of background command ${command.commandId}: ${String(err)}`);
    });
  }

  /** Renews the running commands' leases a few times per lease, as RunLeases does for runs. */
  private scheduleRenewal(): void {
    if (this.renewal !== null) return;
    this.renewal = setInterval(
      () => void this.renew(),
      Math.max(100, Math.floor(this.config.runLeaseMs / 3)),
    );
    this.renewal.unref();
  }

  private async renew(): Promise<void> {
    const ids = [...this.running.keys()];
    if (ids.length === 0 || this.records === null) return;
    try {
      const found = await this.records.renew(this.process.id, ids, this.config.runLeaseMs);
      const seen = new Set(found.map((f) => f.commandId));
      for (const f of found) if (!f.renewed) this.running.get(f.commandId)?.stop(f.reason);
      // A row that is gone went with its session.
      for (const id of ids) if (!seen.has(id)) this.running.get(id)?.stop('session');
    } catch (err) {
      // The next tick tries again; a lease that lapses meanwhile ends the command at the next success.
      this.logger.warn(`could not renew background command leases: ${String(err)}`);
    }
  }

  private requireRecords(): CommandRecords {
    if (this.records === null)
      throw new Error('background commands have no durable list (CommandsModule not loaded)');
    return this.records;
  }
}

/** How a command ended: its exit, a limit, or the reason it was stopped for. */
function ending(
  exit: ProcessGroupExit,
  limitHit: LimitHit,
  stopReason: StopReason | null,
): { status: Exclude<CommandStatus, 'running'>; exitCode: number | null; reason: StopReason | null } {
  if (exit.aborted) return { status: 'stopped', exitCode: null, reason: stopReason ?? 'cancelled' };
  if (limitHit !== null || exit.signal === 'SIGXFSZ' || exit.signal === 'SIGXCPU') {
    return { status: 'stopped', exitCode: null, reason: 'limit' };
  }
  if (exit.exitCode !== null) return { status: 'exited', exitCode: exit.exitCode, reason: null };
  const signo = exit.signal === null ? undefined : constants.signals[exit.signal];
  return { status: 'exited', exitCode: signo === undefined ? null : 128 + signo, reason: null };
}
