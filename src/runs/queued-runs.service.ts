import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DomainError, ErrorCode } from '../common/domain-error';
import { Draining } from '../common/draining.service';
import { serializeEvent } from '../events/run-events';
import type { IdempotencyClaim } from '../store/idempotency-store.service';
import { QueuedRunStore } from '../store/queued-run-store.service';
import { RunStore } from '../store/run-store.service';
import { DrivenRuns } from './driven-runs.service';
import { ResumedRuns } from './resumed-runs.service';
import { StartPlans } from './start-plans.service';
import { replayOf } from './start-replays.service';
import type { StartedRun } from './start-run';

/** How many idle queues one sweep starts at most (the next sweep takes the rest). */
const SWEEP_LIMIT = 50;

/** A prompt queued behind its session's active run. */
export interface QueuedRun {
  runId: string;
  /** The run it waits for, if one is active (an interrupt cancels it). */
  activeRunId: string | null;
}

/** A prompt to a busy session: queued, or answered by the run an earlier request with its Idempotency-Key started. */
export type Enqueued = { queued: QueuedRun } | { earlier: StartedRun };

/**
 * Prompts that wait for their session ("Messages while a run is active"). One mechanism starts
 * them: when a session is idle, its oldest queued run starts (QueuedRunStore.startNext) — asked by
 * the process that ended the session's run the moment it did (unless the statement that ended it
 * saw no prompt waiting: RunWritten), and by every process's sweep
 * (RunSupervisor) for the idle queues nobody took up: a run ended by a process that died, by a
 * take-over's end, by a cancel of a waiting run. Whichever process starts one drives it.
 */
@Injectable()
export class QueuedRuns implements OnModuleInit {
  private readonly logger = new Logger(QueuedRuns.name);

  constructor(
    private readonly store: QueuedRunStore,
    private readonly runs: RunStore,
    private readonly plans: StartPlans,
    private readonly driven: DrivenRuns,
    private readonly resumed: ResumedRuns,
    private readonly draining: Draining,
  ) {}

  onModuleInit(): void {
    // The run's last statement saw no prompt waiting: one queued since is the sweep's to start.
    this.driven.onSessionFreed((sessionId, queued) => {
      if (queued !== false) void this.startNext(sessionId);
    });
  }

  /**
   * Queues `prompt` behind the owner's session's active run (`front`: before every queued one, for
   * an interrupt). Null when the session is idle — the caller starts the run as usual; a 429 when
   * SESSION_MAX_QUEUE prompts wait already (nothing stored). With an Idempotency-Key (`key`) the
   * queued run claims it as a started one would: a retry is answered with the first request's run
   * (a 422 for another body) and queues nothing.
   */
  async enqueue(
    owner: string,
    sessionId: string,
    prompt: string,
    front: boolean,
    responseFormat?: unknown,
    key?: Omit<IdempotencyClaim, 'owner'>,
  ): Promise<Enqueued | null> {
    const draft = await this.plans.queued(owner, sessionId, prompt, front, responseFormat);
    const outcome = await this.store.enqueue(
      draft,
      (position) => serializeEvent(draft.id, 1, { type: 'queued', position }),
      key && { owner, ...key },
    );
    if ('earlier' in outcome) return { earlier: replayOf(outcome.earlier) };
    if ('full' in outcome) {
      throw new DomainError(ErrorCode.QueueFull, `Session ${sessionId} has as many queued prompts as it may`);
    }
    if (!outcome.queued) return null;
    // The active run may have ended while this one was being queued (its process found the queue
    // locked); an interrupt's caller starts it once the active run is cancelled.
    if (!front) void this.startNext(sessionId);
    return { queued: { runId: draft.id, activeRunId: outcome.activeRunId } };
  }

  /** Starts the session's oldest queued run and drives it here, if the session is idle. */
  async startNext(sessionId: string): Promise<void> {
    if (this.draining.active) return;
    try {
      const started = await this.store.startNext(
        sessionId,
        this.driven.processId,
        randomUUID(),
        (runId, seq, model) => serializeEvent(runId, seq, { type: 'run_started', sessionId, model }),
      );
      if (started) await this.resumed.takeUp(started.id);
    } catch (err) {
      this.logger.warn({
        sessionId,
        msg: `could not start the queued run: ${err instanceof Error ? err.message : String(err)}`,
      });
    }
  }

  /** Starts the queued runs whose session is idle: those no ending process started. */
  async sweep(): Promise<void> {
    if (this.draining.active) return;
    for (const sessionId of await this.store.idleQueues(SWEEP_LIMIT)) await this.startNext(sessionId);
  }

  /** Ends the run `cancelled` if it is still queued (then it never starts); false if it is not queued. */
  async cancel(runId: string): Promise<boolean> {
    const run = await this.runs.findRun(runId);
    if (!run || run.status !== 'queued') return false;
    return this.store.cancel(runId, (seq) =>
      serializeEvent(runId, seq, {
        type: 'done',
        sessionId: run.sessionId,
        status: 'cancelled',
        iterations: 0,
        usage: { promptTokens: 0, completionTokens: 0, costUsd: null },
        messageId: null,
      }),
    );
  }
}
