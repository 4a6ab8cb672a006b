import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { DomainError, ErrorCode } from '../common/domain-error';
import { Draining } from '../common/draining';
import { serializeEvent, type SerializedEvent } from '../events/run-events';
import { RunOrchestrator } from '../agent/run-orchestrator.service';
import { BudgetGuard, type BudgetExceeded } from '../agent/budget-guard';
import { RunTracing, type RunTrace } from '../observability/run-tracing';
import { ToolRegistry } from '../tools/tool-registry.service';
import { Toolset } from '../tools/toolset';
import {
  IdempotencyStore,
  type ClaimedEarlier,
  type IdempotencyClaim,
} from '../store/idempotency-store.service';
import { ConversationStore, type MessageRow } from '../store/conversation-store.service';
import {
  RunStartStore,
  type KeyRunCounts,
  type NewRun,
  type RunStart,
  type StartOutcome,
} from '../store/run-start-store.service';
import { RunStore, type Queryable, type RunRow } from '../store/run-store.service';
import type { NewSession, SessionRow } from '../store/session-store.service';
import { sessionNotFound, SessionsService, type SessionOptions } from '../sessions/sessions.service';
import { FirstCallsAhead, type FirstCall } from './first-calls-ahead';
import { newSessionConversation } from './start-conversation';

/**
 * Start transactions that may be between their count of a key's runs and their commit, on every
 * replica together (each holds a pooled connection, 10 per process): up to ten replicas, a key this
 * far from its limits cannot pass them without the per-key lock.
 */
const LIMIT_MARGIN = 100;

/** A new prompt (in a new session unless sessionId), or the session's last prompt answered again. */
export type StartRun = (
  | {
      prompt: string;
      sessionId?: string;
      /** Options of the session to create when there is no sessionId. */
      session?: SessionOptions;
    }
  | { regenerate: true; sessionId: string; session?: undefined }
) & {
  /** The request's Idempotency-Key: when an earlier request claimed it, its run is the answer. */
  idempotency?: Omit<IdempotencyClaim, 'owner'>;
  /** The request's W3C `traceparent`: the run's trace goes on under it. */
  traceParent?: string;
};

/** The run a start request is answered with: the one it started, or the one its key's first request did. */
export interface StartedRun {
  runId: string;
  sessionId: string;
  /** True when an earlier request with the same Idempotency-Key started it. */
  replayed: boolean;
}

/** A run its start has stored, leased to the starting process, for it to drive. */
export interface OpenedRun {
  run: RunRow;
  session: SessionRow;
  /** The session's messages, the prompt included. */
  conversation: MessageRow[];
  firstEvent: SerializedEvent;
  /** The prompt's position in the session. */
  promptSeq: number;
  nextMessageSeq: number;
  /** When the lease was about to be written: the process counts on no more lease than it has. */
  leasedAt: number;
  /** The session's tools, as the run offers them. */
  toolset: Toolset;
  /** The run's first model call, when it went out with the start; its controller is the run's. */
  firstCall?: FirstCall;
  /** The run's trace (its first `invoke_agent` span). */
  trace: RunTrace;
}

/**
 * A start request: its Idempotency-Key, whether the server and the key may start a run now, the
 * session (found or created), and the run with its prompt and first event — written by one statement
 * (RunStartStore.start), which stores nothing when the key is near one of its limits; then the
 * statement runs again in a transaction, after the key's lock. A request with an Idempotency-Key
 * claims it in the same transaction as its run. Refusals store nothing, the key included.
 */
@Injectable()
export class RunStarts {
  /** Whether a start may be admitted without the key's lock: both limits are above the margin. */
  private readonly unlockedStarts: boolean;

  constructor(
    private readonly store: RunStore,
    private readonly starts: RunStartStore,
    private readonly idempotency: IdempotencyStore,
    private readonly sessions: SessionsService,
    private readonly conversation: ConversationStore,
    private readonly orchestrator: RunOrchestrator,
    private readonly callsAhead: FirstCallsAhead,
    private readonly registry: ToolRegistry,
    private readonly draining: Draining,
    private readonly budgets: BudgetGuard,
    private readonly tracing: RunTracing,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.unlockedStarts =
      config.rateLimitRunsPerMinute > LIMIT_MARGIN && config.maxActiveRunsPerKey > LIMIT_MARGIN;
  }

  /**
   * Stores the new run leased to `processId`, which drives `localRuns` runs now; or, when an earlier
   * request claimed the same Idempotency-Key, answers with that request's run and stores nothing.
   */
  async open(
    owner: string,
    input: StartRun,
    processId: string,
    localRuns: number,
  ): Promise<{ earlier: StartedRun } | { opened: OpenedRun }> {
    const options = Object.entries(input.session ?? {}).filter(([, v]) => v !== undefined);
    if (input.sessionId && options.length > 0) {
      throw new DomainError(
        ErrorCode.InvalidRequest,
        `${options.map(([k]) => k).join(', ')} can only be set when the chat creates its session (without sessionId)`,
      );
    }
    let plan: StartPlan;
    try {
      plan = await this.plan(owner, input, processId);
    } catch (err) {
      // A retry while the run its key started is still the session's active one: the key answers
      // before the busy session is refused (the key is read only now, so other starts pay nothing).
      const held =
        input.idempotency && isSessionBusy(err)
          ? await this.idempotency.held(this.store.queryable, { owner, ...input.idempotency })
          : null;
      if (held) return { earlier: replayOf(held) };
      throw err;
    }
    // A replay of an Idempotency-Key starts nothing, so it sends nothing ahead; nor does a key under
    // BUDGETS: its first call waits for the loop's check (BudgetGuard).
    const ahead =
      input.idempotency || this.refusal(localRuns) || this.budgets.keyLimits(owner).length > 0
        ? undefined
        : this.callsAhead.send(plan.start, plan.session, plan.toolset);
    let trace: RunTrace | undefined;
    const stored = async (tx?: Queryable): Promise<{ earlier: StartedRun } | { opened: OpenedRun }> => {
      // First, so that a request refused below leaves the key unused (the transaction rolls back).
      if (input.idempotency && tx) {
        const held = await this.idempotency.claim(tx, { owner, ...input.idempotency }, plan.start.run.id);
        if (held) return { earlier: replayOf(held) };
      }
      const refusal = this.refusal(localRuns);
      if (refusal) throw refusal;
      const over = await this.budgets.keyExceeded(owner);
      if (over) throw budgetExceeded(over);
      trace = this.tracing.startRun(
        { runId: plan.start.run.id, sessionId: plan.start.run.sessionId, model: plan.start.run.model },
        input.traceParent,
      );
      plan.start.run.traceParent = trace.traceParent;
      const leasedAt = Date.now();
      const outcome = await this.startWithinLimits(plan.start, tx);
      this.callsAhead.startAdmitted(owner, outcome.counts);
      const opened = await this.opened(plan, outcome, leasedAt, tx);
      return {
        opened: { ...opened, trace, firstCall: await this.callsAhead.keep(ahead, opened.conversation) },
      };
    };
    try {
      return input.idempotency ? await this.store.transaction((tx) => stored(tx)) : await stored();
    } catch (err) {
      this.callsAhead.startFailed(owner, ahead, err);
      trace?.end('refused');
      // Another request started a run on this session between our look and our insert.
      if (!isUniqueViolation(err)) throw err;
      const running = await this.store.activeRunOfSession(this.store.queryable, plan.start.run.sessionId);
      throw sessionBusy(plan.start.run.sessionId, running ?? '');
    }
  }

  /**
   * Everything the start will write, decided before writing: the session (read, or drafted from the
   * options), the run's model and iteration cap, and its first event. A busy session is a 409 here,
   * before any count of the key's runs (a 429).
   */
  private async plan(owner: string, input: StartRun, processId: string): Promise<StartPlan> {
    const runId = randomUUID();
    let session: SessionRow | NewSession;
    let toolset: Toolset;
    let answers: RunStart['answers'];
    if (input.sessionId) {
      const found = await this.sessions.findWithActiveRun(owner, input.sessionId);
      if (found.activeRunId) throw sessionBusy(input.sessionId, found.activeRunId);
      session = found.session;
      toolset = new Toolset(this.registry, this.config, session);
      answers =
        'prompt' in input
          ? { kind: 'prompt', prompt: { id: randomUUID(), content: input.prompt } }
          : { kind: 'regenerate' };
    } else {
      const draft = this.sessions.draft(owner, {
        title: 'prompt' in input ? titleFrom(input.prompt) : '',
        ...input.session,
      });
      session = draft.session;
      toolset = draft.toolset;
      answers = {
        kind: 'new-session',
        session: draft.session,
        system: { id: randomUUID(), content: draft.systemMessage },
        prompt: { id: randomUUID(), content: 'prompt' in input ? input.prompt : '' },
      };
    }
    const model = session.model ?? this.orchestrator.defaultModel;
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

  /**
   * The start statement, first on its own (or in the caller's transaction `tx`) with the counts that
   * take no lock: they miss only starts whose transactions have not committed — at most one per
   * pooled connection of every replica — so a key more than LIMIT_MARGIN below its limits cannot pass
   * one. Nearer, nothing was stored, and the statement runs again after the key's lock, which
   * serialises its starts up to their commit (and so their fsync). With a limit within the margin
   * (the defaults are) the statement alone could never admit a start: it takes the lock at once.
   */
  private async startWithinLimits(
    start: RunStart,
    tx: Queryable | undefined,
  ): Promise<Extract<StartOutcome, { admitted: true }>> {
    if (this.unlockedStarts) {
      const first = await this.starts.start(tx ?? this.store.queryable, start, LIMIT_MARGIN);
      if (first.admitted) return first;
    }
    const exact = async (locked: Queryable) => {
      await this.starts.lockKey(locked, start.run.owner);
      return this.starts.start(locked, start, 0);
    };
    const second = tx ? await exact(tx) : await this.store.transaction(exact);
    if (!second.admitted) throw this.limitReached(second.counts);
    return second;
  }

  /**
   * The stored run as its process drives it, with the session's conversation up to its prompt —
   * read in the start's transaction `tx` when there is one, the only connection that sees the prompt
   * before the commit.
   */
  private async opened(
    plan: StartPlan,
    outcome: Extract<StartOutcome, { admitted: true }>,
    leasedAt: number,
    tx: Queryable | undefined,
  ): Promise<Omit<OpenedRun, 'firstCall' | 'trace'>> {
    const { start } = plan;
    const { run, answers } = start;
    if (outcome.promptSeq === null) {
      // Nothing was stored: the statement found no session to add to, or no prompt to answer again.
      if (answers.kind === 'regenerate') {
        throw new DomainError(
          ErrorCode.InvalidRequest,
          `Session ${run.sessionId} has no prompt to answer again`,
        );
      }
      throw sessionNotFound(run.sessionId);
    }
    const promptSeq = outcome.promptSeq;
    let session: SessionRow;
    let conversation: MessageRow[];
    if (answers.kind === 'new-session' && outcome.session) {
      // Nothing to read: the session holds just what this start wrote.
      session = outcome.session;
      conversation = newSessionConversation(answers, run.id, session.createdAt);
    } else {
      session = plan.session as SessionRow;
      // In the start's transaction when there is one: the only connection that sees the prompt yet.
      conversation = await this.conversation.runConversation(session.id, tx);
    }
    return {
      run: newRunRow(run),
      session,
      conversation,
      firstEvent: plan.firstEvent,
      toolset: plan.toolset,
      promptSeq,
      nextMessageSeq: answers.kind === 'regenerate' ? session.nextMessageSeq : promptSeq + 1,
      leasedAt,
    };
  }

  /** The 503 of a start now: while draining, or when this process drives as many runs as it may. */
  private refusal(localRuns: number): DomainError | null {
    if (this.draining.active)
      return new DomainError(
        ErrorCode.ShuttingDown,
        'The server is shutting down; retry on another instance',
        {},
        1,
      );
    if (localRuns >= this.config.maxActiveRuns) {
      return new DomainError(
        ErrorCode.ServerBusy,
        'The server is running as many runs as it may; retry shortly',
        {},
        1,
      );
    }
    return null;
  }

  /** The 429 of a key at one of its limits, counted exactly. */
  private limitReached(counts: KeyRunCounts): DomainError {
    if (counts.lastMinute >= this.config.rateLimitRunsPerMinute) {
      const retryAfter = Math.max(1, Math.ceil((60_000 - counts.oldestAgeMs) / 1000));
      return new DomainError(
        ErrorCode.RateLimited,
        `Rate limit: at most ${this.config.rateLimitRunsPerMinute} runs a minute per key`,
        {},
        retryAfter,
      );
    }
    return new DomainError(
      ErrorCode.TooManyActiveRuns,
      `This key already has ${counts.active} active runs (MAX_ACTIVE_RUNS_PER_KEY=${this.config.maxActiveRunsPerKey})`,
      {},
      1,
    );
  }
}

/** A start decided: what it writes, and the session it writes to (or creates). */
interface StartPlan {
  session: SessionRow | NewSession;
  /** The tools the run offers. */
  toolset: Toolset;
  start: RunStart;
  firstEvent: SerializedEvent;
}

/** The 429 of a key whose budget in the current window is spent; it may start again once the window rolls over. */
function budgetExceeded(over: BudgetExceeded): DomainError {
  return new DomainError(
    ErrorCode.BudgetExceeded,
    `This key's budget is spent: ${over.limit}`,
    { code: ErrorCode.BudgetExceeded },
    over.retryAfterSeconds ?? undefined,
  );
}

function sessionBusy(sessionId: string, runId: string): DomainError {
  return new DomainError(ErrorCode.SessionBusy, `Session ${sessionId} already has an active run`, { runId });
}

function isSessionBusy(err: unknown): boolean {
  return err instanceof DomainError && err.code === ErrorCode.SessionBusy;
}

/** The answer to a request whose key an earlier request holds: that request's run, or a 422 for another body. */
function replayOf(held: ClaimedEarlier): StartedRun {
  if (!held.sameRequest) {
    throw new DomainError(
      ErrorCode.IdempotencyKeyReused,
      'This Idempotency-Key was used with a different request body; use a new key for a new request',
      { runId: held.runId },
    );
  }
  return { runId: held.runId, sessionId: held.sessionId, replayed: true };
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}

function titleFrom(prompt: string): string {
  const line = prompt.trim().split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 77)}…` : line;
}

function newRunRow(row: NewRun): RunRow {
  return {
    ...row,
    status: 'running',
    iterations: 0,
    promptTokens: 0,
    completionTokens: 0,
    costUsd: null,
    error: null,
    lastSeq: 1,
    finalMessageId: null,
    leaseExpired: false,
    cancelRequested: false,
    createdAt: new Date(),
    finishedAt: null,
  };
}
