import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { DomainError, ErrorCode } from '../common/domain-error';
import { serializeEvent, type SerializedEvent } from '../events/run-events';
import { registryTakesImages } from '../llm/model-registry';
import { ModelProviders } from '../llm/model-providers.service';
import { ToolRegistry } from '../tools/tool-registry.service';
import { Toolset } from '../tools/toolset';
import type { QueuedRunDraft } from '../store/queued-run-store.service';
import type { RunStart } from '../store/run-start-store.service';
import type { NewSession, SessionRow } from '../store/session-store.service';
import { checkResponseFormat } from '../sessions/response-format';
import type { ResponseFormat } from '../common/response-format';
import { sessionEndUser } from '../auth/end-user';
import { sessionNotFound, Sessions } from '../sessions/sessions.service';
import { Prompts, type ResolvedPrompt } from '../files/prompts.service';
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
    private readonly prompts: Prompts,
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
    // Before anything is read or written: a file that is not the caller's is a 400 naming it.
    const prompt: ResolvedPrompt | null =
      'prompt' in input
        ? await this.prompts.resolve({ owner, endUser: input.endUser ?? null }, input.prompt)
        : null;
    const runId = randomUUID();
    let session: SessionRow | NewSession;
    let toolset: Toolset;
    let answers: RunStart['answers'];
    const endUser = input.endUser ?? null;
    if (input.sessionId) {
      const found = await this.sessions.findWithActiveRun(owner, input.sessionId);
      if (found.session.parentSessionId !== null) {
        throw new DomainError(
          ErrorCode.ChildSession,
          `Session ${input.sessionId} is a child session: it takes its prompt from its delegate call, not from a client`,
        );
      }
      if (endUser !== null && found.session.endUser !== endUser) throw sessionNotFound(input.sessionId);
      if (found.activeRunId) throw sessionBusy(input.sessionId, found.activeRunId);
      session = found.session;
      toolset = new Toolset(this.registry, this.config, session);
      answers = prompt !== null ? { kind: 'prompt', prompt: promptMessage(prompt) } : { kind: 'regenerate' };
    } else {
      const draft = this.sessions.draft(
        owner,
        {
          title: prompt !== null ? titleFrom(prompt) : '',
          ...input.session,
          endUser: sessionEndUser(endUser, input.session?.endUser) ?? undefined,
        },
        input.delegation,
      );
      session = draft.session;
      toolset = draft.toolset;
      answers = {
        kind: 'new-session',
        session: draft.session,
        system: { id: randomUUID(), content: draft.systemMessage },
        prompt: prompt !== null ? promptMessage(prompt) : { id: randomUUID(), content: '' },
      };
    }
    const { maxIterations } = this.runModel(session);
    const model = input.replay?.model ?? this.runModel(session).model;
    const responseFormat = runResponseFormat(input.responseFormat, session);
    if (prompt !== null) assertModelTakes(model, prompt);
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
          maxIterations,
          leaseOwner: processId,
          traceParent: null,
          responseFormat,
          replay: input.replay ? { of: input.replay.of, steps: input.replay.steps } : null,
        },
        firstEvent,
        answers,
      },
    };
  }

  /**
   * A run that waits for the owner's session `sessionId` (404 when it is not the owner's) before it
   * answers `prompt`: its model and iteration cap as a start would choose them now.
   */
  async queued(
    owner: string,
    sessionId: string,
    prompt: string,
    front: boolean,
    responseFormat: unknown,
  ): Promise<QueuedRunDraft> {
    const { session } = await this.sessions.findWithActiveRun(owner, sessionId);
    return {
      id: randomUUID(),
      sessionId,
      owner,
      prompt,
      front,
      ...this.runModel(session),
      responseFormat: runResponseFormat(responseFormat, session),
    };
  }

  private runModel(session: SessionRow | NewSession): { model: string; maxIterations: number } {
    return {
      model: session.model ?? this.models.defaultModel,
      maxIterations: Math.min(session.maxIterations ?? this.config.maxIterations, this.config.maxIterations),
    };
  }
}

/** The 409 of a session that already has an active run (`runId`): one run per session at a time. */
export function sessionBusy(sessionId: string, runId: string): DomainError {
  return new DomainError(ErrorCode.SessionBusy, `Session ${sessionId} already has an active run`, { runId });
}

/** The format a run answers against: the prompt's own, else its session's (null: free text). */
function runResponseFormat(
  given: unknown,
  session: Pick<SessionRow, 'responseFormat'> | NewSession,
): ResponseFormat | null {
  return given === undefined ? (session.responseFormat ?? null) : checkResponseFormat(given);
}

/** A prompt with an image or a PDF for a model the registry knows not to take them: a 400 naming it. */
function assertModelTakes(model: string, prompt: ResolvedPrompt): void {
  const visual = prompt.files.find(
    (f) => f.mediaType.startsWith('image/') || f.mediaType === 'application/pdf',
  );
  if (visual && registryTakesImages(model) === false) {
    throw new DomainError(
      ErrorCode.InvalidRequest,
      `The model ${model} does not take images or PDFs (${visual.name} is ${visual.mediaType}); choose a model that does`,
    );
  }
}

function promptMessage(prompt: ResolvedPrompt): {
  id: string;
  content: string;
  parts: ResolvedPrompt['parts'];
} {
  return { id: randomUUID(), content: prompt.content, parts: prompt.parts };
}

/** A new session's title: the prompt's first line, or its first file's name. */
function titleFrom(prompt: ResolvedPrompt): string {
  const line = prompt.content.trim().split('\n')[0] || (prompt.files[0]?.name ?? '');
  return line.length > 80 ? `${line.slice(0, 77)}…` : line;
}
