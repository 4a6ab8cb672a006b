import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { DomainError, ErrorCode } from '../common/domain-error';
import { Draining } from '../common/draining';
import { serializeEvent, type SerializedEvent } from '../events/run-events';
import { RunOrchestrator } from '../agent/run-orchestrator.service';
import type { SentModelCall } from '../llm/sent-model-call';
import { ToolRegistry } from '../tools/tool-registry.service';
import { Toolset } from '../tools/toolset';
import { IdempotencyStore, type IdempotencyClaim } from '../store/idempotency-store.service';
import { ConversationStore, type MessageRow } from '../store/conversation-store.service';
import {
  RunStartStore,
  type KeyRunCounts,
  type NewMessage,
  type NewRun,
  type RunStart,
  type StartOutcome,
} from '../store/run-start-store.service';
import { RunStore, type Queryable, type RunRow } from '../store/run-store.service';
import type { NewSession, SessionRow } from '../store/session-store.service';
import { sessionNotFound, SessionsService, type SessionOptions } from '../sessions/sessions.service';

/**
 * Start transactions that may be between their count of a key's runs and their commit, on every
 * replica together (each holds a pooled connection, 10 per process): up to ten replicas, a key this
 * far from its limits cannot pass them without the per-key lock.
 */
const LIMIT_MARGIN = 100;

/** Keys remembered as having had room at their last start here (see RunStarts.callAhead). */
const KEYS_REMEMBERED = 10_000;

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
}

/** A run's first model call, sent before its run was stored, and what stops it. */
export interface FirstCall {
  call: SentModelCall;
  controller: AbortController;
}

/** A first model call on its way while the start is stored (RunStarts.callAhead). */
interface CallAhead {
  /** Stops the call, or keeps it from being sent when its conversation is still being read. */
  controller: AbortController;
  /** The call and the conversation it was sent with; undefined when it was not sent. */
  sent: Promise<{ call: SentModelCall; conversation: readonly MessageRow[] } | undefined>;
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
  /** Keys whose last start in this process left room for one more run under both limits. */
  private readonly keysWithRoom = new Set<string>();
  /** Whether a start may be admitted without the key's lock: both limits are above the margin. */
  private readonly unlockedStarts: boolean;

  constructor(
    private readonly store: RunStore,
    private readonly starts: RunStartStore,
    private readonly idempotency: IdempotencyStore,
    private readonly sessions: SessionsService,
    private readonly conversation: ConversationStore,
    private readonly orchestrator: RunOrchestrator,
    private readonly registry: ToolRegistry,
    private readonly draining: Draining,
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
    const plan = await this.plan(owner, input, processId);
    const ahead = this.callAhead(plan, input, localRuns);
    const stored = async (tx?: Queryable): Promise<{ earlier: StartedRun } | { opened: OpenedRun }> => {
      // First, so that a request refused below leaves the key unused (the transaction rolls back).
      if (input.idempotency && tx) {
        const held = await this.idempotency.claim(tx, { owner, ...input.idempotency }, plan.start.run.id);
        if (held && !held.sameRequest) {
          throw new DomainError(
            ErrorCode.IdempotencyKeyReused,
            'This Idempotency-Key was used with a different request body; use a new key for a new request',
            { runId: held.runId },
          );
        }
        if (held) return { earlier: { runId: held.runId, sessionId: held.sessionId, replayed: true } };
      }
      const refusal = this.refusal(localRuns);
      if (refusal) throw refusal;
      const leasedAt = Date.now();
      const outcome = await this.startWithinLimits(plan.start, tx);
      this.remember(owner, outcome.counts);
      const opened = await this.opened(plan, outcome, leasedAt);
      return { opened: { ...opened, firstCall: await this.keepIfSame(ahead, opened.conversation) } };
    };
    try {
      return input.idempotency ? await this.store.transaction((tx) => stored(tx)) : await stored();
    } catch (err) {
      // The start failed: the call sent ahead is stopped, and the key's next start waits for its own.
      ahead?.controller.abort(err);
      this.keysWithRoom.delete(owner);
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
    let answers: RunStart['answers'];
    if (input.sessionId) {
      const found = await this.sessions.findWithActiveRun(owner, input.sessionId);
      if (found.activeRunId) throw sessionBusy(input.sessionId, found.activeRunId);
      session = found.session;
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
      toolset: new Toolset(this.registry, this.config, session),
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

  /** The stored run as its process drives it, with the session's conversation up to its prompt. */
  private async opened(
    plan: StartPlan,
    outcome: Extract<StartOutcome, { admitted: true }>,
    leasedAt: number,
  ): Promise<Omit<OpenedRun, 'firstCall'>> {
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
      conversation = await this.conversation.sessionMessages(session.id);
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

  /**
   * The run's first model call, sent before its start is stored when the start will most likely be
   * admitted — the upstream then works while the start commits, which takes the commit off the way
   * to the first text. Likely means: this process takes runs, and the key's last start here left
   * room for another under both limits; never with an Idempotency-Key (a replay starts nothing),
   * and not for `regenerate`. A prompt that opens a session is sent at once (its conversation is the
   * system message and the prompt); a prompt to an existing session once its conversation is read,
   * which goes on beside the start statement. A start that then stores nothing stops the call
   * (`open`), so a key at its limits costs the upstream nothing and one that reaches them at most a
   * call stopped within the start's round trip; the run keeps the call only when it was sent with
   * the conversation the store holds (`keepIfSame`).
   */
  private callAhead(plan: StartPlan, input: StartRun, localRuns: number): CallAhead | undefined {
    const { run, answers } = plan.start;
    if (answers.kind === 'regenerate' || input.idempotency) return undefined;
    if (!this.keysWithRoom.has(run.owner) || this.refusal(localRuns)) return undefined;
    const controller = new AbortController();
    const send = (conversation: MessageRow[], promptSeq: number) => {
      // The start failed while the conversation was read: nothing to send.
      if (controller.signal.aborted) return undefined;
      const call = this.orchestrator.sendModelCall(
        {
          run: { model: run.model, iterations: 0, maxIterations: run.maxIterations },
          conversation,
          firstMessageSeq: promptSeq,
          toolset: plan.toolset,
        },
        controller.signal,
      );
      return { call, conversation };
    };
    if (answers.kind === 'new-session') {
      const conversation = newSessionConversation(answers, run.id, new Date());
      return { controller, sent: Promise.resolve(send(conversation, NEW_SESSION_PROMPT_SEQ)) };
    }
    // Where the start statement will put the prompt, unless a message lands before it (then the
    // stored conversation differs and the call is not kept).
    const promptSeq = (plan.session as SessionRow).nextMessageSeq;
    const sent = this.conversation.sessionMessages(run.sessionId).then(
      (history) =>
        send(
          [
            ...history.filter((m) => m.seq < promptSeq),
            storedMessage(answers.prompt, 'user', promptSeq, run.id, new Date()),
          ],
          promptSeq,
        ),
      () => undefined, // the run sends its own call
    );
    return { controller, sent };
  }

  /**
   * The call sent ahead, when it was sent with exactly the conversation the store holds for the run
   * (messages are only ever added, so the same ids in the same places are the same conversation);
   * otherwise it is stopped, and the run sends its own.
   */
  private async keepIfSame(
    ahead: CallAhead | undefined,
    conversation: readonly MessageRow[],
  ): Promise<FirstCall | undefined> {
    if (!ahead) return undefined;
    const sent = await ahead.sent;
    const same =
      sent !== undefined &&
      sent.conversation.length === conversation.length &&
      sent.conversation.every((m, i) => m.id === conversation[i].id && m.seq === conversation[i].seq);
    if (same) return { call: sent.call, controller: ahead.controller };
    ahead.controller.abort(new Error('the conversation changed while the start was stored'));
    return undefined;
  }

  /** Notes whether the key had room for one more run after this start (`counts` are from before it). */
  private remember(owner: string, counts: KeyRunCounts): void {
    const room =
      counts.lastMinute + 2 <= this.config.rateLimitRunsPerMinute &&
      counts.active + 2 <= this.config.maxActiveRunsPerKey;
    if (!room) {
      this.keysWithRoom.delete(owner);
      return;
    }
    if (this.keysWithRoom.size >= KEYS_REMEMBERED) this.keysWithRoom.clear();
    this.keysWithRoom.add(owner);
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

/** Where the start statement puts a new session's prompt: after its system message. */
const NEW_SESSION_PROMPT_SEQ = 2;

/** The conversation of a session a start opens: as the start statement writes it. */
function newSessionConversation(
  answers: Extract<RunStart['answers'], { kind: 'new-session' }>,
  runId: string,
  createdAt: Date,
): MessageRow[] {
  const { system, prompt } = answers;
  return [
    storedMessage(system, 'system', 1, null, createdAt),
    storedMessage(prompt, 'user', NEW_SESSION_PROMPT_SEQ, runId, createdAt),
  ];
}

/** A message a start writes, as the store then holds it. */
function storedMessage(
  message: NewMessage,
  role: 'system' | 'user',
  seq: number,
  runId: string | null,
  createdAt: Date,
): MessageRow {
  const { id, content } = message;
  return { id, seq, role, content, toolCalls: null, toolCallId: null, runId, createdAt };
}

function sessionBusy(sessionId: string, runId: string): DomainError {
  return new DomainError(ErrorCode.SessionBusy, `Session ${sessionId} already has an active run`, { runId });
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
    error: null,
    lastSeq: 1,
    finalMessageId: null,
    leaseExpired: false,
    cancelRequested: false,
    createdAt: new Date(),
    finishedAt: null,
  };
}
