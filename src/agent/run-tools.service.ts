import type { StoredMessagePart } from '../persistence/entities/message.entity';
import { Inject, Injectable } from '@nestjs/common';
import { toStorableText } from '../common/storable-text';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import type { ToolCallRow } from '../store/conversation-store.service';
import type { Tool, ToolResult } from '../tools/tool';
import { ToolRunner } from '../tools/tool-runner.service';
import type { ToolLookup } from '../tools/toolset';
import { Workspaces } from '../tools/workspaces';
import { registryTakesImages } from '../llm/model-registry';
import type { RunHandle } from './run-handle';

/** A tool's result and how long it took to run. */
export interface TimedResult {
  result: ToolResult;
  durationMs: number;
  /** A recorded result's stored parts (a replay): its file's reference, used again as it is. */
  parts?: StoredMessagePart[] | null;
}

/**
 * Runs a run's tools in its session's workspace, with its signal and its live output: a step's call
 * (`run`). Also words what a person is asked to approve, and refuses a call whose effect changed since.
 */
@Injectable()
export class RunTools {
  constructor(
    private readonly runner: ToolRunner,
    private readonly workspaces: Workspaces,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Makes the run's workspace folder now, while the model answers, so that the step's first call
   * does not wait for it. Never rejects: a failure is met again by the call that needs the folder.
   */
  prepareWorkspace(h: RunHandle): void {
    // Safe to ignore: the handle forgets a folder that failed, and the call that needs it tries again.
    this.workspaceOf(h).catch(() => undefined);
  }

  /**
   * Runs a call of a step (`lookup` is its tool in the run's toolset), timed. Its live output is
   * shown once `recorded` (the call's record) has committed: a read may start before (ToolSteps).
   */
  run(h: RunHandle, call: ToolCallRow, lookup: ToolLookup, recorded?: Promise<void>): Promise<TimedResult> {
    return timed(() => this.runNow(h, call, lookup, recorded));
  }

  /** What the person is asked to approve: why, then what the tool says it will do (a diff, a command). */
  async approvalText(
    h: RunHandle,
    tool: Tool,
    args: Record<string, unknown>,
    callId: string,
  ): Promise<string> {
    // A tool that cannot word its call (a file gone, a server down) is asked about by its name alone:
    // the person still decides, and the call itself meets the failure again if approved.
    const summary = await tool
      .describeForApproval?.(args, {
        workspaceRoot: await this.workspaceOf(h),
        signal: h.signal,
        runId: h.run.id,
        sessionId: h.session.id,
        toolCallId: callId,
        config: this.config,
      })
      .catch(() => undefined);
    const why = `${tool.name} needs approval in ${h.session.mode} mode.`;
    // The summary quotes files (a diff), which may hold text PostgreSQL cannot store.
    return summary ? `${why}\n${toStorableText(summary)}` : why;
  }

  private async runNow(
    h: RunHandle,
    call: ToolCallRow,
    lookup: ToolLookup,
    recorded: Promise<void> = Promise.resolve(),
  ): Promise<ToolResult> {
    if (lookup.kind !== 'server') {
      return {
        content: `There is no server tool named ${call.name} in this session.`,
        isError: true,
        errorCode: 'UNKNOWN_TOOL',
      };
    }
    if (await this.changedSinceApprovalAsked(h, lookup.tool, call)) {
      return {
        content:
          'Not run: what this call would do changed after the person approved it (a file it touches was changed ' +
          'in between). Nothing was written. Read the file again and make a new call.',
        isError: true,
        errorCode: 'CONFLICT',
      };
    }
    const args = (call.arguments ?? {}) as Record<string, unknown>;
    return this.runTool(h, lookup.tool, args, call.callId, recorded);
  }

  /**
   * A person approves what will really happen: when the same call would now do something else (the
   * file changed under it), it is not run. Edited arguments were approved as edited, so they are not compared.
   */
  private async changedSinceApprovalAsked(h: RunHandle, tool: Tool, call: ToolCallRow): Promise<boolean> {
    if (call.status !== 'approved' || call.approvalReason === null || !tool.describeForApproval) return false;
    const edited = call.approval?.editedArguments;
    if (edited !== undefined && edited !== null) return false;
    const args = (call.arguments ?? {}) as Record<string, unknown>;
    return (await this.approvalText(h, tool, args, call.callId)) !== call.approvalReason;
  }

  private async runTool(
    h: RunHandle,
    tool: Tool,
    args: Record<string, unknown>,
    toolCallId: string,
    recorded: Promise<void>,
  ): Promise<ToolResult> {
    const show = (stream: 'stdout' | 'stderr', chunk: string): void =>
      h.sink.emit({ type: 'tool_call_output', toolCallId, stream, chunk });
    return this.runner.run(tool, args, {
      workspaceRoot: await this.workspaceOf(h),
      runId: h.run.id,
      sessionId: h.session.id,
      toolCallId,
      parentSignal: h.signal,
      // In order, after the call's own events; nothing when its record failed (the run stops).
      emitOutput: (stream, chunk) =>
        void recorded.then(
          () => show(stream, chunk),
          () => undefined,
        ),
      // read_file shows an image or PDF only to a model that takes them ("Attachments").
      modelTakesFiles: registryTakesImages(h.run.model) !== false,
    });
  }

  private workspaceOf(h: RunHandle): Promise<string> {
    return h.workspace(() =>
      this.workspaces.forSession(h.session.owner, h.session.rootSessionId ?? h.session.id),
    );
  }
}

/** Runs `run`, timing it. */
async function timed(run: () => Promise<ToolResult>): Promise<TimedResult> {
  const started = performance.now();
  const result = await run();
  return { result, durationMs: Math.round(performance.now() - started) };
}
