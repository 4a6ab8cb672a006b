import { Inject, Injectable } from '@nestjs/common';
import { stat } from 'node:fs/promises';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { AgentTool } from '../agent-tool.decorator';
import { HeadTailCollector } from '../exec/head-tail-collector';
import { OutputCoalescer } from '../exec/output-coalescer';
import { runInProcessGroup, type ProcessGroupExit } from '../exec/process-group';
import { Semaphore } from '../exec/semaphore';
import { CommandSandbox } from '../exec/command-sandbox.service';
import { MAX_FILE_BYTES, MAX_PROCESSES, type LimitHit } from '../exec/command-limits';
import { sandboxEnv } from '../exec/sandbox';
import { resolveInWorkspace, toWorkspaceRelative } from '../path-guard';
import { ToolError, jsonSchemaOf, type Tool, type ToolContext, type ToolResult } from '../tool';
import { Type, type Static } from 'typebox';

/** run_command's arguments; the most a call may ask for (RUN_COMMAND_MAX_TIMEOUT_MS) is the operator's. */
function runCommandArgs(config: Pick<AppConfig, 'toolTimeoutMs' | 'runCommandMaxTimeoutMs'>) {
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
          description: `Time limit in milliseconds (default ${config.toolTimeoutMs}, at most ${config.runCommandMaxTimeoutMs}). Ask for more for long builds or test runs.`,
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

  timeoutMs(args: RunCommandArgs, config: AppConfig): number {
    return Math.min(args.timeout_ms ?? config.toolTimeoutMs, config.runCommandMaxTimeoutMs);
  }

  async describeForApproval(args: RunCommandArgs, ctx: Pick<ToolContext, 'config'>): Promise<string> {
    const seconds = Math.round(this.timeoutMs(args, ctx.config) / 1000);
    return `Run in ${args.cwd ?? '.'} (time limit ${seconds} s):\n$ ${args.command}`;
  }

  async execute(args: RunCommandArgs, ctx: ToolContext): Promise<ToolResult> {
    const root = ctx.workspaceRoot;
    const cwd = await resolveInWorkspace(root, args.cwd ?? '.');
    if (!(await stat(cwd)).isDirectory()) {
      throw new ToolError('INVALID_ARGUMENTS', `cwd: ${args.cwd ?? '.'} is a file, not a folder.`);
    }

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
      const limits = this.sandbox.sandboxed
        ? this.sandbox.commandLine(
            { workspace: root, cwd, env: this.config.commandEnv },
            args.command,
            this.timeoutMs(args, ctx.config),
          )
        : null;
      let exit: ProcessGroupExit;
      try {
        exit = await runInProcessGroup({
          command: args.command,
          argv: limits?.argv,
          cwd,
          // Only the start-up snapshot of allowed variables: the server's own environment never reaches a command.
          env: limits ? sandboxEnv({ env: this.config.commandEnv }) : this.config.commandEnv,
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
