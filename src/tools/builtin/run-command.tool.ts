import { Inject, Injectable } from '@nestjs/common';
import { stat } from 'node:fs/promises';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { AgentTool } from '../agent-tool.decorator';
import { HeadTailCollector } from '../exec/head-tail-collector';
import { OutputCoalescer } from '../exec/output-coalescer';
import { runInProcessGroup, type ProcessGroupExit } from '../exec/process-group';
import { Semaphore } from '../exec/semaphore';
import { BackgroundCommands } from '../exec/background-commands.service';
import { CommandSandbox } from '../exec/command-sandbox.service';
import { MAX_FILE_BYTES, MAX_PROCESSES, type AppliedLimits, type LimitHit } from '../exec/command-limits';
import { sandboxEnv } from '../exec/sandbox';
import { toWorkspaceRelative } from '../fs/workspace-paths';
import { resolveInWorkspace } from '../path-guard';
import { ToolError, jsonSchemaOf, type Tool, type ToolContext, type ToolResult } from '../tool';
import { Type, type Static } from 'typebox';

/** run_command's arguments; the most a call may ask for (RUN_COMMAND_MAX_TIMEOUT_MS) is the operator's. */
function runCommandArgs(
  config: Pick<AppConfig, 'toolTimeoutMs' | 'runCommandMaxTimeoutMs' | 'runCommandMaxBackground'>,
) {
  return Type.Object(
    {
      command: Type.String({
        minLength: 1,
        description: 'The command line, e.g. "npm test -- --runInBand".',
      }),
      cwd: Type.Optional(
        Type.String({ description: 'Folder to run in, relative to the workspace root. Default: the root.' }),
      ),
      timeout_ms: Type.Optional(
        Type.Integer({
          minimum: 1000,
          maximum: config.runCommandMaxTimeoutMs,
          description: `Time limit in milliseconds (default ${config.toolTimeoutMs}, at most ${config.runCommandMaxTimeoutMs}; a background command's default is the most). Ask for more for long builds or test runs.`,
        }),
      ),
      background: Type.Optional(
        Type.Boolean({
          description: `Start it and return at once with its commandId (a dev server, a watcher, a long build): it goes on while you work; read it with get_command_output, stop it with cancel_command. At most ${config.runCommandMaxBackground} per session at once.`,
        }),
      ),
    },
    { additionalProperties: false },
  );
}
export type RunCommandArgs = Static<ReturnType<typeof runCommandArgs>>;

/** Live output reaches the client at most this often per stream, or sooner once this much piles up. */
const STREAM_INTERVAL_MS = 100;
const STREAM_MAX_BYTES = 8 * 1024;
const KILL_GRACE_MS = 1000;
/** Room kept under TOOL_OUTPUT_MAX_BYTES for the header lines, so the runner's own cap never cuts the tail. */
const HEADER_ROOM_BYTES = 1024;

@Injectable()
@AgentTool()
export class RunCommandTool implements Tool<RunCommandArgs> {
  readonly name = 'run_command';
  readonly kind = 'exec';
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  private readonly slots: Semaphore;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sandbox: CommandSandbox,
    private readonly background: BackgroundCommands,
  ) {
    this.slots = new Semaphore(config.runCommandMaxConcurrent);
    this.description =
      (sandbox.sandboxed
        ? 'Run a shell command line (/bin/sh -c) in a sandbox that sees only the workspace (at its usual path), the system programs, a private /tmp' +
          (config.runCommandNetwork ? '' : ' and no network') +
          '; return its exit code and combined output (stdout and stderr; long output keeps its start and end).'
        : "WARNING: NOT SANDBOXED (RUN_COMMAND_SANDBOX=off): the command runs as the server's user. Run a shell command line (/bin/sh -c) in the workspace and return its exit code and combined output (stdout and stderr; long output keeps its start and end).") +
      ' There is no input: commands that wait for a person will get end-of-file. Processes it starts are stopped when it ends or times out.';
    this.parameters = jsonSchemaOf(runCommandArgs(config));
  }

  /** Offered only where a sandbox can be made (or the operator turned it off): checked at start-up. */
  isEnabled(config: AppConfig): boolean {
    return config.enableRunCommand && this.sandbox.usable;
  }

  /** A background command's default is the most: only RUN_COMMAND_MAX_TIMEOUT_MS (or a smaller timeout_ms) bounds it. */
  timeoutMs(args: RunCommandArgs, config: AppConfig): number {
    const asked = args.timeout_ms ?? (args.background ? config.runCommandMaxTimeoutMs : config.toolTimeoutMs);
    return Math.min(asked, config.runCommandMaxTimeoutMs);
  }

  async describeForApproval(args: RunCommandArgs, ctx: Pick<ToolContext, 'config'>): Promise<string> {
    const seconds = Math.round(this.timeoutMs(args, ctx.config) / 1000);
    const how = args.background ? 'in the background, ' : '';
    return `Run ${how}in ${args.cwd ?? '.'} (time limit ${seconds} s):\n$ ${args.command}`;
  }

  async execute(args: RunCommandArgs, ctx: ToolContext): Promise<ToolResult> {
    const root = ctx.workspaceRoot;
    const cwd = await resolveInWorkspace(root, args.cwd ?? '.');
    if (!(await stat(cwd)).isDirectory()) {
      throw new ToolError('INVALID_ARGUMENTS', `cwd: ${args.cwd ?? '.'} is a file, not a folder.`);
    }
    if (args.background) return this.startInBackground(args, ctx, cwd);

    const release = await this.slots.acquire(ctx.signal);
    try {
      const budget = Math.max(1024, ctx.config.toolOutputMaxBytes - HEADER_ROOM_BYTES);
      const output = new HeadTailCollector(Math.floor(budget / 2), Math.ceil(budget / 2));
      const live = {
        stdout: new OutputCoalescer((chunk) => ctx.emitOutput('stdout', chunk), {
          intervalMs: STREAM_INTERVAL_MS,
          maxBytes: STREAM_MAX_BYTES,
        }),
        stderr: new OutputCoalescer((chunk) => ctx.emitOutput('stderr', chunk), {
          intervalMs: STREAM_INTERVAL_MS,
          maxBytes: STREAM_MAX_BYTES,
        }),
      };
      const limits = this.limitsFor(args, ctx, cwd);
      let exit: ProcessGroupExit;
      try {
        exit = await runInProcessGroup({
          command: args.command,
          argv: limits?.argv,
          cwd,
          env: this.envFor(limits),
          signal: ctx.signal,
          killGraceMs: KILL_GRACE_MS,
          onOutput: (stream, data) => {
            output.push(data);
            live[stream].push(data);
          },
        });
      } finally {
        live.stdout.end();
        live.stderr.end();
      }
      const limitHit = limits?.finish() ?? null;
      const where = toWorkspaceRelative(root, cwd);
      const body = output.size === 0 ? '(no output)' : output.text();
      if (exit.aborted) return this.stoppedResult(args, ctx, where, body);
      if (limitHit !== null || exit.signal === 'SIGXFSZ' || exit.signal === 'SIGXCPU') {
        return {
          content: `$ ${args.command}\n(in ${where}) ${describeExit(exit)}: stopped by a limit — ${describeLimit(limitHit, exit, this.config)}\n${body}`,
          isError: true,
          errorCode: 'EXECUTION_ERROR',
          truncated: output.truncated,
        };
      }
      return {
        content: `$ ${args.command}\n(in ${where}) ${describeExit(exit)}\n${body}`,
        truncated: output.truncated,
      };
    } finally {
      release();
    }
  }

  /** The sandbox and limits around the command, or null when the operator turned the sandbox off. */
  private limitsFor(args: RunCommandArgs, ctx: ToolContext, cwd: string): AppliedLimits | null {
    if (!this.sandbox.sandboxed) return null;
    return this.sandbox.commandLine(
      { workspace: ctx.workspaceRoot, cwd, env: this.config.commandEnv },
      args.command,
      this.timeoutMs(args, ctx.config),
    );
  }

  /** Only the start-up snapshot of allowed variables: the server's own environment never reaches a command. */
  private envFor(limits: AppliedLimits | null): Record<string, string> {
    return limits ? sandboxEnv({ env: this.config.commandEnv }) : { ...this.config.commandEnv };
  }

  /** background: true — the command goes on after the call (BackgroundCommands); the result names it. */
  private async startInBackground(args: RunCommandArgs, ctx: ToolContext, cwd: string): Promise<ToolResult> {
    const where = toWorkspaceRelative(ctx.workspaceRoot, cwd);
    if (!this.background.available) {
      return {
        content: 'Background commands are not available on this server.',
        isError: true,
        errorCode: 'EXECUTION_ERROR',
      };
    }
    const limits = this.limitsFor(args, ctx, cwd);
    const timeoutMs = this.timeoutMs(args, ctx.config);
    const started = await this.background.start({
      sessionId: ctx.sessionId,
      command: args.command,
      argv: limits?.argv,
      cwd,
      env: this.envFor(limits),
      timeoutMs,
      finishLimits: () => limits?.finish() ?? null,
    });
    if (started === 'no-session') {
      return {
        content: `$ ${args.command}\nNot started: this session no longer exists.`,
        isError: true,
        errorCode: 'NOT_FOUND',
      };
    }
    if (started === 'full') {
      return {
        content: `$ ${args.command}\nNot started: this session already runs ${ctx.config.runCommandMaxBackground} background commands (RUN_COMMAND_MAX_BACKGROUND). Stop one with cancel_command, or wait for one to end.`,
        isError: true,
        errorCode: 'CONFLICT',
      };
    }
    return {
      content: `$ ${args.command}\n(in ${where}) started in the background: commandId ${started.commandId} (time limit ${Math.round(timeoutMs / 1000)} s). Read its output with get_command_output, stop it with cancel_command.`,
    };
  }

  private stoppedResult(args: RunCommandArgs, ctx: ToolContext, where: string, body: string): ToolResult {
    const reason: unknown = ctx.signal.reason;
    const timedOut = reason instanceof ToolError && reason.code === 'TIMEOUT';
    const why = timedOut
      ? `The command did not finish within ${this.timeoutMs(args, ctx.config) / 1000} s; it and every process it started were stopped. If it needs longer, ask for a larger timeout_ms (at most ${ctx.config.runCommandMaxTimeoutMs}).`
      : `The command was stopped (${reason instanceof ToolError ? reason.message : 'the run was cancelled'}); every process it started was stopped too.`;
    const code = reason instanceof ToolError ? reason.code : 'CANCELLED';
    return {
      content: `$ ${args.command}\n(in ${where}) ${why}\nOutput so far:\n${body}`,
      isError: true,
      errorCode: code,
    };
  }
}

function describeLimit(hit: LimitHit, exit: ProcessGroupExit, config: AppConfig): string {
  if (hit === 'memory')
    return `the memory limit of ${config.runCommandMemoryMb} MiB (RUN_COMMAND_MEMORY_MB) for the command and everything it starts`;
  if (hit === 'processes') return `the limit of ${MAX_PROCESSES} processes at once`;
  if (exit.signal === 'SIGXFSZ') return `the file size limit of ${MAX_FILE_BYTES / 1024 / 1024} MiB`;
  return 'the CPU time limit';
}

function describeExit(exit: ProcessGroupExit): string {
  if (exit.exitCode !== null) return `exit code ${exit.exitCode}`;
  return `terminated by ${exit.signal ?? 'a signal'}`;
}
