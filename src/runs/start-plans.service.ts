import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { DomainError, ErrorCode } from '../common/domain-error';
import { serializeEvent, type SerializedEvent } from '../events/run-events';
import { ModelProviders } from '../llm/model-providers';
import { ToolRegistry } from '../tools/tool-registry.service';
import { Toolset } from '../tools/toolset';
import type { RunStart } from '../store/run-start-store.service';
import type { NewSession, SessionRow } from '../store/session-store.service';
import { Sessions } from '../sessions/sessions.service';
import type { StartRun } from './start-run';

/** A start decided: what it writes, and the session it writes to (or creates). */
export interface StartPlan {
  session: SessionRow | NewSession;
  /** The tools the run offers. */
  toolset: Toolset;
  start: RunStart;
  firstEvent: SerializedEvent;
}

/**
 * Everything a start will write, decided before anything is written or counted: the start
 * statement then has nothing left to choose, and a request that cannot start (options for a
 * session that exists, a busy session) is refused before it costs a count of the key's runs.
 */
@Injectable()
export class StartPlans {
  constructor(
    private readonly sessions: Sessions,
    private readonly models: ModelProviders,
    private readonly registry: ToolRegistry,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The session (read, or drafted from the options), the run (leased to `processId`) with its model
   * and iteration cap, and its first event. A busy session is a 409 here, before any count of the
   * key's runs (a 429).
   */
  async plan(owner: string, input: StartRun, processId: string): Promise<StartPlan> {
    const options = Object.entries(input.session ?? {}).filter(([, v]) => v !== undefined);
    if (input.sessionId && options.length > 0) {
      throw new DomainError(
        ErrorCode.InvalidRequest,
        `${options.map(([k]) => k).join(', ')} can only be set when the chat creates its session (without sessionId)`,
      );
    }
    const runId = randomUUID();
    let session: SessionRow | NewSession;
    let toolset: Toolset;
    let answers: RunStart['answers'];
    if (input.sessionId) {
      const found = await this.sessions.findWithActiveRun(owner, input.sessionId);
      if (found.session.parentSessionId !== null) {
        throw new DomainError(
          ErrorCode.ChildSession,
          `Session ${input.sessionId} is a child session: it takes its prompt from its delegate call, not from a client`,
        );
      }
      if (found.activeRunId) throw sessionBusy(input.sessionId, found.activeRunId);
      session = found.session;
      toolset = new Toolset(this.registry, this.config, session);
      answers =
        'prompt' in input
          ? { kind: 'prompt', prompt: { id: randomUUID(), content: input.prompt } }
          : { kind: 'regenerate' };
    } else {
      const draft = this.sessions.draft(
        owner,
        { title: 'prompt' in input ? titleFrom(input.prompt) : '', ...input.session },
        input.delegation,
      );
      session = draft.session;
      toolset = draft.toolset;
      answers = {
        kind: 'new-session',
        session: draft.session,
        system: { id: randomUUID(), content: draft.systemMessage },
        prompt: { id: randomUUID(), content: 'prompt' in input ? input.prompt : '' },
      };
    }
    const model = session.model ?? this.models.defaultModel;
    const firstEvent = serializeEvent(runId, 1, { type: 'run_started', sessionId: session.id, model });
    return {
      session,
      toolset,
      firstEvent,
      start: {
        run: {
          id: runId,
          sessionId: session.id,
          owner,
          model,
          maxIterations: Math.min(
            session.maxIterations ?? this.config.maxIterations,
            this.config.maxIterations,
          ),
          leaseOwner: processId,
          traceParent: null,
        },
        firstEvent,
        answers,
      },
    };
  }
}

/** The 409 of a session that already has an active run (`runId`): one run per session at a time. */
export function sessionBusy(sessionId: string, runId: string): DomainError {
  return new DomainError(ErrorCode.SessionBusy, `Session ${sessionId} already has an active run`, { runId });
}

function titleFrom(prompt: string): string {
  const line = prompt.trim().split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 77)}…` : line;
}
