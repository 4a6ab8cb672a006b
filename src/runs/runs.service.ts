import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { DomainError, ErrorCode } from '../common/domain-error';
import { TickGate } from '../common/ticks';
import { RUN_STARTS_PER_TICK } from '../common/tuning';
import { Metrics } from '../metrics/metrics.service';
import { PgNotifications } from '../persistence/pg-notifications.service';
import { RunEventHub } from '../events/run-event-hub.service';
import { RunStopped } from '../agent/run-handle';
import { ConversationStore, type ToolCallRow } from '../store/conversation-store.service';
import { RUN_CANCEL_CHANNEL, RunStore, type RunRow } from '../store/run-store.service';
import { finishDetachedRun } from './detached-runs';
import { RunTakeover } from '../agent/run-takeover.service';
import { DrivenRuns } from './driven-runs.service';
import { RunStarts } from './run-starts.service';
import type { StartedRun, StartRun } from './start-run';
import { RunJournal } from '../store/run-journal.service';
import { SessionStore } from '../store/session-store.service';
import { QueuedRuns } from './queued-runs.service';

/**
 * What a client asks of runs: start one, read it, cancel it, stop following it. A start stores the
 * run (RunStarts) and hands it to this process to drive (DrivenRuns); the rest of a run's life —
 * taken up after a wait or over after a crash (ResumedRuns), its lease kept or handed over
 * (RunLeases) — needs no request. Every state change locks the run's row first, so exactly one
 * process moves a run at a time.
 */
@Injectable()
export class Runs implements OnModuleInit {
  /** Starts begin their work a few per tick, so that a burst of starts does not fill every tick. */
  private readonly startTicks = new TickGate(RUN_STARTS_PER_TICK);

  constructor(
    private readonly store: RunStore,
    private readonly conversation: ConversationStore,
    private readonly starts: RunStarts,
    private readonly driven: DrivenRuns,
    private readonly hub: RunEventHub,
    private readonly notifications: PgNotifications,
    private readonly metrics: Metrics,
    private readonly takeover: RunTakeover,
    private readonly journal: RunJournal,
    private readonly sessions: SessionStore,
    private readonly queued: QueuedRuns,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.notifications.listen(RUN_CANCEL_CHANNEL, (runId) => this.driven.get(runId)?.stop('cancelled'));
  }

  /**
   * Creates the run (and the session when needed), stores the prompt and starts driving it. With an
   * Idempotency-Key that an earlier request claimed, starts nothing and answers with that run. A
   * prompt to a busy session is refused (`onActive` reject), queued behind its run (enqueue: the
   * run is answered at once, QueuedRuns starts it), or queued first while that run is cancelled
   * (interrupt). A queued prompt claims its Idempotency-Key as a started one does: a retry queues,
   * and interrupts, nothing again.
   */
  async start(owner: string, input: StartRun): Promise<StartedRun> {
    const onActive = input.onActive ?? 'reject';
    if (onActive === 'reject' || !input.sessionId || !('prompt' in input)) return this.startNow(owner, input);
    const sessionId = input.sessionId;
    if (typeof input.prompt !== 'string') {
      // A queued prompt is stored as its text until its run starts; files go with a prompt sent at once.
      throw new DomainError(
        ErrorCode.InvalidRequest,
        `onActive ${onActive} takes a text prompt; send files once the session is idle`,
      );
    }
    const prompt = input.prompt;
    // Queued when the session is busy, started as usual when it is idle; a run that became active
    // between the two looks sends the prompt to the queue after all (a few times at most).
    for (let attempt = 1; ; attempt++) {
      const enqueued = await this.queued.enqueue(
        owner,
        sessionId,
        prompt,
        onActive === 'interrupt',
        input.responseFormat,
        input.idempotency,
      );
      if (enqueued && 'earlier' in enqueued) return enqueued.earlier;
      if (enqueued) {
        const { queued } = enqueued;
        if (onActive === 'interrupt') await this.interrupt(owner, sessionId, queued.activeRunId);
        return { runId: queued.runId, sessionId, replayed: false };
      }
      try {
        return await this.startNow(owner, input);
      } catch (err) {
        if (attempt >= 3 || !(err instanceof DomainError) || err.code !== ErrorCode.SessionBusy) throw err;
      }
    }
  }

  /** Cancels the session's active run, then starts the interrupt's run queued first behind it. */
  private async interrupt(owner: string, sessionId: string, activeRunId: string | null): Promise<void> {
    if (activeRunId !== null) await this.cancel(owner, activeRunId);
    // Driven elsewhere, the run ends there and that process starts the next; the sweep otherwise.
    await this.queued.startNext(sessionId);
  }

  private async startNow(owner: string, input: StartRun): Promise<StartedRun> {
    await this.startTicks.pass();
    const started = await this.starts.open(owner, input, this.driven.processId, this.driven.size);
    if ('earlier' in started) return started.earlier;
    const {
      run,
      session,
      conversation,
      firstEvent,
      promptSeq,
      nextMessageSeq,
      leasedAt,
      toolset,
      firstCall,
      trace,
    } = started.opened;
    this.driven.launch(
      this.driven.newHandle(
        {
          run,
          session,
          conversation,
          toolset,
          callIds: new Set(),
          callCounts: new Map(),
          firstMessageSeq: promptSeq,
          nextMessageSeq,
          resumesStep: false, // a new run has no calls yet
          firstCall,
          trace,
        },
        leasedAt,
        [firstEvent],
      ),
    );
    this.metrics.runStarted();
    return { runId: run.id, sessionId: session.id, replayed: false };
  }

  async getRun(owner: string, runId: string): Promise<RunRow & { pendingToolCalls: ToolCallRow[] }> {
    const run = await this.store.findRun(runId, owner);
    if (!run) throw runNotFound(runId);
    // A child's waiting calls are its ancestors' too (each names its run).
    const pendingToolCalls =
      run.status === 'requires_action'
        ? await this.conversation.waitingCallsBelow(this.store.queryable, runId)
        : [];
    return { ...run, pendingToolCalls };
  }

  /** 404 unless the run exists and is the owner's. */
  async assertRun(owner: string, runId: string): Promise<RunRow> {
    const run = await this.store.findRun(runId, owner);
    if (!run) throw runNotFound(runId);
    return run;
  }

  /** Cancels the run, then its child runs (a delegation's), and theirs. */
  async cancel(owner: string, runId: string): Promise<void> {
    await this.cancelOne(owner, runId);
    // After the parent: its delegate calls are answered by its end, not by the children's.
    for (const child of await this.sessions.childrenOfRun(this.store.queryable, runId)) {
      if (child.runId !== null) await this.cancel(owner, child.runId);
    }
  }

  private async cancelOne(owner: string, runId: string): Promise<void> {
    let run = await this.store.findRun(runId, owner);
    if (!run) throw runNotFound(runId);
    if (run.status === 'queued') {
      if (await this.queued.cancel(runId)) return;
      // It started a moment ago: it is cancelled like any active run.
      run = await this.store.findRun(runId, owner);
      if (!run) throw runNotFound(runId);
    }
    if (!isActive(run)) return;
    const local = this.driven.get(runId);
    // A run this process let go is no longer its to end: it is ended like any undriven run.
    if (local && !local.released) {
      local.stop('cancelled');
      await local.done;
      return;
    }
    if (
      await finishDetachedRun(
        this.store,
        this.conversation,
        this.journal,
        this.metrics,
        runId,
        {
          status: 'cancelled',
          why: new RunStopped('cancelled').message,
        },
        this.takeover,
      )
    )
      return;
    // Another live process drives it: tell it.
    await this.store.requestCancel(runId);
  }

  /** A stream of the run in this process closed; with ON_DISCONNECT=cancel the last one stops a running run. */
  streamClosed(runId: string): void {
    if (this.config.onDisconnect !== 'cancel' || this.hub.followerCount(runId) > 0) return;
    this.driven.get(runId)?.stop('disconnected');
  }
}

function isActive(run: RunRow): boolean {
  return run.status === 'running' || run.status === 'requires_action';
}

export function runNotFound(runId: string): DomainError {
  return new DomainError(ErrorCode.RunNotFound, `Run ${runId} not found`);
}
