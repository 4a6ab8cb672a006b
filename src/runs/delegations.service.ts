import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { AgentConfig } from '../config/agents-config';
import type { AppConfig, SessionMode } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { DomainError, ErrorCode } from '../common/domain-error';
import type { DriveOutcome } from '../agent/run-orchestrator.service';
import { ConversationStore, type ToolCallRow } from '../store/conversation-store.service';
import { RunStore, type RunRow } from '../store/run-store.service';
import { SessionStore, type ChildOfRun, type SessionRow } from '../store/session-store.service';
import { ToolRegistry } from '../tools/tool-registry.service';
import { Toolset } from '../tools/toolset';
import { DrivenRuns } from './driven-runs.service';
import { Runs } from './runs.service';
import { ToolCallDecisions } from './tool-call-decisions.service';

const MODE_LADDER: readonly SessionMode[] = ['safe', 'write', 'exec'];

/**
 * `delegate` calls (docs/decisions/022): a parent run waits for its child runs the way it waits for a
 * person. The loop stores a `delegate` call as `awaiting_child` and the run pauses in
 * `requires_action`; from then on everything happens here, on whichever process: `advance` starts a
 * child run (through the ordinary start path, in a child session) for each waiting call, at most
 * AGENT_MAX_PARALLEL at once, and answers each call whose child has ended — through
 * ToolCallDecisions, so the process that answers the last waiting call continues the parent like
 * after an approval. It runs when a run this process drove pauses or ends, and every second for
 * every waiting parent (a process that died between two of these steps leaves nothing stuck).
 */
@Injectable()
export class Delegations implements OnModuleInit {
  private readonly logger = new Logger(Delegations.name);

  constructor(
    private readonly store: RunStore,
    private readonly conversation: ConversationStore,
    private readonly sessions: SessionStore,
    private readonly runs: Runs,
    private readonly driven: DrivenRuns,
    private readonly decisions: ToolCallDecisions,
    private readonly registry: ToolRegistry,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    if (this.config.agents.length === 0) return;
    this.driven.onSettled((run, outcome) => {
      this.afterDrive(run, outcome).catch((err: unknown) =>
        this.logger.warn({ runId: run.id, msg: `delegations not moved on: ${String(err)}` }),
      );
    });
  }

  /** Moves every waiting parent on (RunSupervisor, every second). */
  async sweep(): Promise<void> {
    if (this.config.agents.length === 0) return;
    for (const runId of await this.conversation.runsAwaitingChildren(this.store.queryable)) {
      await this.advance(runId);
    }
  }

  private async afterDrive(run: RunRow, outcome: DriveOutcome): Promise<void> {
    if (outcome === 'requires_action') return this.advance(run.id);
    if (outcome === 'released') return;
    // An ended child: its parent's call gets its answer.
    const session = await this.sessions.find(run.sessionId, null);
    if (session?.parentRunId) await this.advance(session.parentRunId);
  }

  /**
   * A parent's delegations moved on: each waiting call whose child has ended is answered, and calls
   * without a child yet get one while fewer than AGENT_MAX_PARALLEL of the run's children run.
   */
  async advance(parentRunId: string): Promise<void> {
    const q = this.store.queryable;
    const parent = await this.store.findRun(parentRunId, undefined, q);
    if (!parent || parent.status !== 'requires_action') return;
    const waiting = (await this.conversation.unsettledToolCalls(q, parentRunId)).filter(
      (c) => c.status === 'awaiting_child',
    );
    if (waiting.length === 0) return;
    const children = new Map((await this.sessions.childrenOfRun(q, parentRunId)).map((c) => [c.callId, c]));
    let running = [...children.values()].filter((c) => isActive(c.status)).length;
    const parentSession = await this.sessions.find(parent.sessionId, null, q);
    if (!parentSession) return;
    for (const call of waiting) {
      const child = children.get(call.callId);
      if (child !== undefined) continue;
      if (running >= this.config.agentMaxParallel) break;
      running++;
      await this.start(parent, parentSession, call);
    }
    for (const call of waiting) {
      const child = children.get(call.callId);
      if (child?.status && !isActive(child.status)) await this.answer(parent.id, call, child);
    }
  }

  /** Starts the child run of `call` in a new child session; a start that fails answers the call with why. */
  private async start(parent: RunRow, parentSession: SessionRow, call: ToolCallRow): Promise<void> {
    const args = call.arguments as { agent: string; task: string };
    const agent = this.config.agents.find((a) => a.name === args.agent);
    if (agent === undefined) {
      return this.fail(parent.id, call, `There is no agent named ${args.agent} on this server.`);
    }
    try {
      // Its start announces it in this run's log (subagent_started), in the start's own statement.
      await this.runs.start(parent.owner, {
        prompt: args.task,
        session: { ...this.childOptions(agent, parentSession), title: titleOf(agent, args.task) },
        // A child session is its root's key's and end user's.
        endUser: parentSession.endUser,
        delegation: {
          parentSessionId: parentSession.id,
          parentRunId: parent.id,
          parentCallId: call.callId,
          rootSessionId: parentSession.rootSessionId ?? parentSession.id,
          rootRunId: parentSession.rootRunId ?? parent.id,
          depth: parentSession.depth + 1,
        },
      });
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      // Another process started this call's child first (one child session per call); or this one
      // is shutting down or full: the call keeps waiting and the next sweep (any process) starts it.
      if (
        err.code === ErrorCode.SessionBusy ||
        err.code === ErrorCode.ShuttingDown ||
        err.code === ErrorCode.ServerBusy
      )
        return;
      return this.fail(parent.id, call, `The agent ${agent.name} could not start: ${err.message}`);
    }
  }

  /**
   * What a child may do: never more than its parent — the lower of the two modes, the agent's tools
   * that the parent's session may use (its client tools included, where the agent names them or
   * names no tools); the workspace is the root's (RunTools). Its calls reserve on the limits of the
   * runs above it (RunAccounting), so children running at once never pass their root's maxTokens or
   * maxCostUsd together: a child session has no limits of its own.
   */
  private childOptions(agent: AgentConfig, parent: SessionRow) {
    const mode =
      MODE_LADDER[Math.min(MODE_LADDER.indexOf(agent.mode ?? 'safe'), MODE_LADDER.indexOf(parent.mode))];
    const parentTools = new Set(new Toolset(this.registry, this.config, parent).serverToolNames);
    const wanted = agent.tools ?? this.registry.enabled().map((t) => t.name);
    return {
      agent: agent.name,
      mode,
      tools: wanted.filter((name) => parentTools.has(name)),
      clientTools: parent.clientTools.filter(
        (d) => agent.tools === null || agent.tools.includes(d.function.name),
      ),
    };
  }

  /** Answers `call` with its ended child's final answer (an error unless it completed). */
  private async answer(parentRunId: string, call: ToolCallRow, child: ChildOfRun): Promise<void> {
    const status = child.status ?? 'failed';
    const completed = status === 'completed';
    const last = child.answer ? ` Its last text:\n${child.answer}` : '';
    const content = completed
      ? (child.answer ?? '')
      : `The agent ${child.agent ?? ''} did not finish its task (its run ended ${status}` +
        `${child.error ? `: ${child.error.message}` : ''}).${last}`;
    await this.decisions.answerFromChild(parentRunId, {
      kind: 'child',
      toolCallId: call.callId,
      content,
      isError: !completed,
      usage: {
        promptTokens: child.promptTokens,
        completionTokens: child.completionTokens,
        costUsd: child.costUsd,
      },
      announce: [
        {
          type: 'subagent_finished',
          toolCallId: call.callId,
          agent: child.agent ?? '',
          childRunId: child.runId ?? '',
          childSessionId: child.sessionId,
          status,
          usage: {
            promptTokens: child.promptTokens,
            completionTokens: child.completionTokens,
            costUsd: child.costUsd,
          },
        },
      ],
    });
  }

  private fail(parentRunId: string, call: ToolCallRow, message: string): Promise<void> {
    return this.decisions.answerFromChild(parentRunId, {
      kind: 'child',
      toolCallId: call.callId,
      content: message,
      isError: true,
      announce: [],
      usage: null,
    });
  }
}

function isActive(status: string | null): boolean {
  return status === 'running' || status === 'requires_action';
}

function titleOf(agent: AgentConfig, task: string): string {
  const line = `${agent.name}: ${task.trim().split('\n')[0] ?? ''}`;
  return line.length > 80 ? `${line.slice(0, 77)}…` : line;
}
