import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { DomainError, ErrorCode } from '../common/domain-error';
import { Draining } from '../common/draining';
import { serializeEvent, type SerializedEvent } from '../events/run-events';
import { RunOrchestrator } from '../agent/run-orchestrator.service';
import { IdempotencyStore, type IdempotencyClaim } from '../store/idempotency-store.service';
import { RunStartStore, type NewRun } from '../store/run-start-store.service';
import { RunStore, type Queryable, type RunRow } from '../store/run-store.service';
import type { SessionRow } from '../store/session-store.service';
import { SessionsService, type SessionOptions } from '../sessions/sessions.service';

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
};

/** The run a start request is answered with: the one it started, or the one its key's first request did. */
export interface StartedRun {
  runId: string;
  sessionId: string;
  /** True when an earlier request with the same Idempotency-Key started it. */
  replayed: boolean;
}

/** A run its start transaction has stored, leased to the starting process, for it to drive. */
export interface OpenedRun {
  run: RunRow;
  session: SessionRow;
  firstEvent: SerializedEvent;
  /** The prompt's position in the session. */
  promptSeq: number;
  nextMessageSeq: number;
  /** When the lease was about to be written: the process counts on no more lease than it has. */
  leasedAt: number;
}

/**
 * A start request's transaction: its Idempotency-Key, whether the server and the key may start a run
 * now, the session (found or created), and the run with its prompt and first event. Refusals roll
 * everything back, the key included.
 */
@Injectable()
export class RunStarts {
  constructor(
    private readonly store: RunStore,
    private readonly starts: RunStartStore,
    private readonly idempotency: IdempotencyStore,
    private readonly sessions: SessionsService,
    private readonly orchestrator: RunOrchestrator,
    private readonly draining: Draining,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

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
    const runId = randomUUID();
    const leasedAt = Date.now();
    return this.store.transaction(async (tx) => {
      // First, so that a request refused below leaves the key unused (the transaction rolls back).
      if (input.idempotency) {
        const held = await this.idempotency.claim(tx, { owner, ...input.idempotency }, runId);
        if (held && !held.sameRequest) {
          throw new DomainError(
            ErrorCode.IdempotencyKeyReused,
            'This Idempotency-Key was used with a different request body; use a new key for a new request',
            { runId: held.runId },
          );
        }
        if (held) return { earlier: { runId: held.runId, sessionId: held.sessionId, replayed: true } };
      }
      this.assertTakingRuns(localRuns);
      const session = input.sessionId
        ? await this.sessions.find(owner, input.sessionId, tx)
        : await this.sessions.create(
            owner,
            { title: 'prompt' in input ? titleFrom(input.prompt) : '', ...input.session },
            tx,
          );
      const active = input.sessionId ? await this.store.activeRunOfSession(tx, session.id) : null;
      if (active) throw sessionBusy(session.id, active);
      await this.checkLimits(tx, owner);
      const model = session.model ?? this.orchestrator.defaultModel;
      const maxIterations = Math.min(
        session.maxIterations ?? this.config.maxIterations,
        this.config.maxIterations,
      );
      const firstEvent = serializeEvent(runId, 1, { type: 'run_started', sessionId: session.id, model });
      const row: NewRun = {
        id: runId,
        sessionId: session.id,
        owner,
        model,
        maxIterations,
        leaseOwner: processId,
      };
      let promptSeq: number;
      try {
        if ('prompt' in input) {
          promptSeq = await this.starts.insertRun(
            tx,
            row,
            { id: randomUUID(), content: input.prompt },
            firstEvent,
          );
        } else {
          const seq = await this.starts.insertRegeneratedRun(tx, row, firstEvent);
          if (seq === null) {
            throw new DomainError(
              ErrorCode.InvalidRequest,
              `Session ${session.id} has no prompt to answer again`,
            );
          }
          promptSeq = seq;
        }
      } catch (err) {
        // Another request started a run on this session between our check and our insert.
        if (!isUniqueViolation(err)) throw err;
        const running = await this.store.activeRunOfSession(this.store.queryable, session.id);
        throw sessionBusy(session.id, running ?? '');
      }
      return {
        opened: {
          run: newRunRow(row),
          session,
          firstEvent,
          promptSeq,
          nextMessageSeq: 'prompt' in input ? promptSeq + 1 : session.nextMessageSeq,
          leasedAt,
        },
      };
    });
  }

  /** 503 while draining or when this process drives as many runs as it may. */
  private assertTakingRuns(localRuns: number): void {
    if (this.draining.active)
      throw new DomainError(
        ErrorCode.ShuttingDown,
        'The server is shutting down; retry on another instance',
        {},
        1,
      );
    if (localRuns >= this.config.maxActiveRuns) {
      throw new DomainError(
        ErrorCode.ServerBusy,
        'The server is running as many runs as it may; retry shortly',
        {},
        1,
      );
    }
  }

  /**
   * The key's limits, counted in the database so every replica sees the same. A first count takes
   * no lock; only a key within LIMIT_MARGIN of a limit is counted again under its lock, which
   * serialises its starts up to their commit (and so their fsync). The first count can miss only
   * starts whose transactions have not committed — at most one per pooled connection of every
   * replica — so below the margin it cannot let a limit be passed.
   */
  private async checkLimits(tx: Queryable, owner: string): Promise<void> {
    let counts = await this.starts.ownerRunCounts(tx, owner, false);
    if (
      counts.active + LIMIT_MARGIN >= this.config.maxActiveRunsPerKey ||
      counts.lastMinute + LIMIT_MARGIN >= this.config.rateLimitRunsPerMinute
    ) {
      counts = await this.starts.ownerRunCounts(tx, owner, true);
    }
    if (counts.lastMinute >= this.config.rateLimitRunsPerMinute) {
      const retryAfter = Math.max(1, Math.ceil((60_000 - counts.oldestAgeMs) / 1000));
      throw new DomainError(
        ErrorCode.RateLimited,
        `Rate limit: at most ${this.config.rateLimitRunsPerMinute} runs a minute per key`,
        {},
        retryAfter,
      );
    }
    if (counts.active >= this.config.maxActiveRunsPerKey) {
      throw new DomainError(
        ErrorCode.TooManyActiveRuns,
        `This key already has ${counts.active} active runs (MAX_ACTIVE_RUNS_PER_KEY=${this.config.maxActiveRunsPerKey})`,
        {},
        1,
      );
    }
  }
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
