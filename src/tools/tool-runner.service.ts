import { Inject, Injectable, Logger } from '@nestjs/common';
import { realpath } from 'node:fs/promises';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { toStorableText } from '../common/storable-text';
import { LiveOutput } from './live-output';
import { capHead } from './output-cap';
import { ToolError, type Tool, type ToolContext, type ToolErrorCode, type ToolResult } from './tool';
import { parseToolArguments } from './tool-arguments';
import { errnoCode, errorMessage } from './fs/errno';
import { toToolError } from './tool-error-mapping';
import { ToolRegistry } from './tool-registry.service';

/** What the caller knows about a call; the runner adds the config, the timeout and the combined signal. */
export interface ToolRunContext extends Omit<
  ToolContext,
  'signal' | 'config' | 'workspaceRoot' | 'emitOutput'
> {
  /** The run's signal (cancel, disconnect, shutdown). Its abort gives CANCELLED unless its reason is a ToolError. */
  parentSignal?: AbortSignal;
  /** Defaults to the real path of config.workspaceRoot. */
  workspaceRoot?: string;
  /** Defaults to dropping live output. */
  emitOutput?: ToolContext['emitOutput'];
}

/**
 * After an abort a tool gets this long to clean up (kill its processes, return partial output)
 * before the runner stops waiting for it: a tool that ignores its signal must not hang the run.
 */
export const ABORT_GRACE_MS = 2500;

type Settled =
  { kind: 'result'; result: ToolResult } | { kind: 'thrown'; error: unknown } | { kind: 'abandoned' };

/** Runs one tool call: validation, timeout, abort, error mapping and the output cap, always ending in a ToolResult. */
@Injectable()
export class ToolRunner {
  private readonly logger = new Logger(ToolRunner.name);
  private realRoot: Promise<string> | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly registry: ToolRegistry,
  ) {}

  /**
   * A model's call by name, arguments as the model sent them (a JSON string) or already parsed:
   * unknown tools and bad arguments become error results the model can correct.
   */
  async runCall(
    name: string,
    rawArguments: string | Record<string, unknown>,
    ctx: ToolRunContext,
  ): Promise<ToolResult> {
    const tool = this.registry.get(name);
    if (tool === undefined || !(tool.isEnabled?.(this.config) ?? true)) {
      const known = this.registry
        .enabled()
        .map((t) => t.name)
        .join(', ');
      return this.errorResult('UNKNOWN_TOOL', `There is no tool named ${name}. Available tools: ${known}.`);
    }
    const parsed =
      typeof rawArguments === 'string'
        ? parseToolArguments(rawArguments)
        : { ok: true as const, value: rawArguments };
    if (!parsed.ok) return this.errorResult('INVALID_ARGUMENTS', parsed.message);
    return this.run(tool, parsed.value, ctx);
  }

  /** Runs `tool` with already parsed arguments (validated again here: edited approvals go through the same check). */
  async run(tool: Tool, args: Record<string, unknown>, ctx: ToolRunContext): Promise<ToolResult> {
    const check = this.registry.validate(tool, args);
    if (!check.ok) {
      return this.errorResult('INVALID_ARGUMENTS', `Invalid arguments for ${tool.name}: ${check.message}`);
    }
    if (ctx.parentSignal?.aborted) return this.abortResult(ctx.parentSignal);

    const timeoutMs = tool.timeoutMs?.(args, this.config) ?? this.config.toolTimeoutMs;
    const timeout = new AbortController();
    const timer = setTimeout(() => {
      timeout.abort(
        new ToolError(
          'TIMEOUT',
          `${tool.name} did not finish within ${formatSeconds(timeoutMs)} and was stopped. Try a smaller or narrower request.`,
        ),
      );
    }, timeoutMs);
    const signal = ctx.parentSignal ? AbortSignal.any([ctx.parentSignal, timeout.signal]) : timeout.signal;
    const workspaceRoot = ctx.workspaceRoot ?? (await this.defaultRoot());
    const live = liveOutputOf(ctx.emitOutput);
    const toolCtx: ToolContext = {
      workspaceRoot,
      signal,
      runId: ctx.runId,
      sessionId: ctx.sessionId,
      toolCallId: ctx.toolCallId,
      emitOutput: (stream, chunk) => live?.push(stream, toStorableText(chunk)),
      config: this.config,
      ...(ctx.modelTakesFiles === undefined ? {} : { modelTakesFiles: ctx.modelTakesFiles }),
    };
    try {
      const settled = await settle(tool, args, toolCtx);
      return this.cap(this.toResult(tool, settled, toolCtx));
    } finally {
      clearTimeout(timer);
      // The tail goes out before the result; a tool abandoned after its abort streams nothing more.
      live?.end();
    }
  }

  private toResult(tool: Tool, settled: Settled, ctx: ToolContext): ToolResult {
    switch (settled.kind) {
      case 'result':
        return normalise(settled.result);
      case 'abandoned':
        return this.abortResult(ctx.signal);
      case 'thrown': {
        // Whatever a tool throws after an abort is a consequence of the abort (AbortError, killed process…).
        if (ctx.signal.aborted) return this.abortResult(ctx.signal);
        // A ToolError or a file-system error is the tool's normal way to fail; anything else is a bug to look at.
        if (!(settled.error instanceof ToolError) && errnoCode(settled.error) === undefined) {
          this.logger.warn({
            runId: ctx.runId,
            sessionId: ctx.sessionId,
            toolCallId: ctx.toolCallId,
            msg: `tool ${tool.name} threw: ${stackOf(settled.error)}`,
          });
        }
        const error = toToolError(settled.error, tool.name, ctx.workspaceRoot);
        return this.errorResult(error.code, error.message);
      }
    }
  }

  private abortResult(signal: AbortSignal): ToolResult {
    const reason: unknown = signal.reason;
    if (reason instanceof ToolError) return this.errorResult(reason.code, reason.message);
    return this.errorResult('CANCELLED', 'The run was cancelled before this tool call finished.');
  }

  private errorResult(code: ToolErrorCode, message: string): ToolResult {
    // Messages can quote what the model sent (a tool name).
    return { content: toStorableText(message), isError: true, errorCode: code };
  }

  /** Output as PostgreSQL can hold it (a NUL in a file or a command's output becomes U+FFFD), then capped. */
  private cap(result: ToolResult): ToolResult {
    const content = toStorableText(result.content);
    const capped = capHead(content, this.config.toolOutputMaxBytes);
    if (!capped.truncated) return content === result.content ? result : { ...result, content };
    return { ...result, content: capped.text, truncated: true };
  }

  private defaultRoot(): Promise<string> {
    this.realRoot ??= realpath(this.config.workspaceRoot).catch(() => this.config.workspaceRoot);
    return this.realRoot;
  }
}

/**
 * A call's live output is stored and streamed like the result (chunks come decoded, so each is
 * judged whole), and bounded per call whatever the tool produces (see LiveOutput).
 */
function liveOutputOf(emit: ToolRunContext['emitOutput']): LiveOutput | null {
  return emit === undefined ? null : new LiveOutput(emit);
}

/** Waits for the tool, or — once the signal fires — at most ABORT_GRACE_MS more. */
async function settle(tool: Tool, args: Record<string, unknown>, ctx: ToolContext): Promise<Settled> {
  const execution: Promise<Settled> = Promise.resolve()
    .then(() => tool.execute(args, ctx))
    .then(
      (result): Settled => ({ kind: 'result', result }),
      (error: unknown): Settled => ({ kind: 'thrown', error }),
    );
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const abandoned = new Promise<Settled>((resolve) => {
    onAbort = () => {
      timer = setTimeout(() => resolve({ kind: 'abandoned' }), ABORT_GRACE_MS);
    };
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([execution, abandoned]);
  } finally {
    clearTimeout(timer);
    if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
  }
}

/** Tools are code we trust but not blindly: a malformed result must still reach the model as a string. */
function normalise(result: unknown): ToolResult {
  if (typeof result !== 'object' || result === null) {
    return { content: 'The tool returned no result.', isError: true, errorCode: 'EXECUTION_ERROR' };
  }
  const candidate = result as ToolResult;
  const content =
    typeof candidate.content === 'string' ? candidate.content : JSON.stringify(candidate.content ?? '');
  if (candidate.isError && candidate.errorCode === undefined) {
    return { ...candidate, content, errorCode: 'EXECUTION_ERROR' };
  }
  return { ...candidate, content };
}

function stackOf(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'stack' in err && typeof err.stack === 'string') {
    return err.stack;
  }
  return errorMessage(err);
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
