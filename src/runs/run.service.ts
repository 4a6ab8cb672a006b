import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { DomainError, ErrorCode } from '../common/domain-error';
import { Draining } from '../common/draining';
import { TickGate } from '../common/ticks';
import { RUN_STARTS_PER_TICK } from '../common/tuning';
import { MetricsService } from '../metrics/metrics.service';
import { PgNotifications } from '../persistence/pg-notifications.service';
import { ToolRegistry } from '../tools/tool-registry.service';
import { RunEventHub } from '../events/run-event-hub.service';
import { RunEventSink } from '../events/run-event-sink';
import type { SerializedEvent } from '../events/run-events';
import { RunLease } from '../events/run-lease';
import { StreamWakes } from '../events/stream-wakes';
import { finishDetachedRun } from './detached-runs';
import { RunStarts, type StartRun, type StartedRun } from './run-starts.service';
import { callKey } from '../agent/call-key';
import { RunHandle, RunStopped, type RunHandleInit } from '../agent/run-handle';
import { RunOrchestrator } from '../agent/run-orchestrator.service';
import type { TakeOverReason } from '../agent/run-takeover';
import { ConversationStore, type ToolCallRow } from '../store/conversation-store.service';
import { RUN_CANCEL_CHANNEL, RunStore, type RunRow } from '../store/run-store.service';
import { isRunReleased, LeaseLost } from '../store/store-errors';
import { SessionStore } from '../store/session-store.service';
import { Toolset } from '../tools/toolset';
import type { SentModelCall } from '../llm/sent-model-call';
import { RunTracing } from '../observability/run-tracing';

/**
 * The life of runs around the loop: starting one, taking one up again (after a wait, on any
 * process), cancelling, and ending runs that nobody drives any more.
 * Every state change locks the run's row first, so exactly one process moves a run at a time.
 */
@Injectable()
export class RunService implements OnModuleInit, BeforeApplicationShutdown {
  /** Names this process in run leases. */
  readonly processId = randomUUID();
  private readonly logger = new Logger(RunService.name);
  private readonly handles = new Map<string, RunHandle>();
  /** Starts begin their work a few per tick, so that a burst of starts does not fill every tick. */
  private readonly startTicks = new TickGate(RUN_STARTS_PER_TICK);

  constructor(
    private readonly store: RunStore,
    private readonly conversation: ConversationStore,
    private readonly sessionStore: SessionStore,
    private readonly starts: RunStarts,
    private readonly hub: RunEventHub,
    private readonly wakes: StreamWakes,
    private readonly orchestrator: RunOrchestrator,
    private readonly registry: ToolRegistry,
    private readonly notifications: PgNotifications,
    private readonly metrics: MetricsService,
    private readonly draining: Draining,
    private readonly tracing: RunTracing,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.notifications.listen(RUN_CANCEL_CHANNEL, (runId) =>
      this.handles.get(runId)?.stop('cancelled'),
    );
  }

  /**
   * Stops taking runs, lets the running ones finish within the grace period, then hands the rest
   * over: their leases are given up at once (with a notice), so another process continues them
   * within about a second — or, with none, this server when it starts again.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.draining.start();
    const running = () => [...this.handles.values()].map((h) => h.done);
    const graceOver = new Promise<void>((resolve) =>
      setTimeout(resolve, this.config.shutdownGraceMs).unref(),
    );
    await Promise.race([Promise.all(running()), graceOver]);
    await this.handOver();
    await Promise.all(running());
  }

  /**
   * Gives up the leases of the runs this process still drives, then stops them (they write nothing
   * more). When the leases cannot be given up (the store is down), the runs are taken over once
   * they expire, as after a crash.
   */
  private async handOver(): Promise<void> {
    const runIds = this.localRunIds;
    if (runIds.length === 0) return;
    try {
      const given = await this.store.releaseLeases(this.processId, runIds);
      this.logger.log({
        runs: given.length,
        msg: 'handed running runs over for another process to continue',
      });
    } catch (err) {
      this.logger.warn({
        runs: runIds.length,
        msg: `could not give up the leases (the runs are taken over once they expire): ${err instanceof Error ? err.message : String(err)}`,
      });
    }
    for (const runId of runIds) this.handles.get(runId)?.handOver();
  }

  /**
   * Runs this process still has a handle of, those it has let go and that are winding down included:
   * it never takes one of these over itself, or two of its handles (one lease owner) would write
   * into one run. Another process may; or this one once the old handle has finished.
   */
  get heldRunIds(): string[] {
    return [...this.handles.keys()];
  }

  /** Runs this process drives now (not those it has let go). */
  get localRunIds(): string[] {
    return [...this.handles.values()].filter((h) => !h.released).map((h) => h.run.id);
  }

  /**
   * Creates the run (and the session when needed), stores the prompt and starts driving it. With an
   * Idempotency-Key that an earlier request claimed, starts nothing and answers with that run.
   */
  async start(owner: string, input: StartRun): Promise<StartedRun> {
    await this.startTicks.pass();
    const started = await this.starts.open(owner, input, this.processId, this.handles.size);
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
    this.launch(
      this.newHandle(
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
          controller: firstCall?.controller,
          trace,
        },
        leasedAt,
        [firstEvent],
      ),
      firstCall?.call,
    );
    this.metrics.runStarted();
    return { runId: run.id, sessionId: session.id, replayed: false };
  }

  async getRun(owner: string, runId: string): Promise<RunRow & { pendingToolCalls: ToolCallRow[] }> {
    const run = await this.store.findRun(runId, owner);
    if (!run) throw runNotFound(runId);
    const open =
      run.status === 'requires_action'
        ? await this.conversation.unsettledToolCalls(this.store.queryable, runId)
        : [];
    return {
      ...run,
      pendingToolCalls: open.filter((c) => c.status === 'pending_approval' || c.status === 'awaiting_client'),
    };
  }

  /** 404 unless the run exists and is the owner's. */
  async assertRun(owner: string, runId: string): Promise<RunRow> {
    const run = await this.store.findRun(runId, owner);
    if (!run) throw runNotFound(runId);
    return run;
  }

  async cancel(owner: string, runId: string): Promise<void> {
    const run = await this.store.findRun(runId, owner);
    if (!run) throw runNotFound(runId);
    if (!isActive(run)) return;
    const local = this.handles.get(runId);
    // A run this process let go is no longer its to end: it is ended like any undriven run.
    if (local && !local.released) {
      local.stop('cancelled');
      await local.done;
      return;
    }
    if (
      await finishDetachedRun(this.store, this.conversation, this.metrics, runId, {
        status: 'cancelled',
        why: new RunStopped('cancelled').message,
      })
    )
      return;
    // Another live process drives it: tell it.
    await this.store.requestCancel(runId);
  }

  /** A stream of the run in this process closed; with ON_DISCONNECT=cancel the last one stops a running run. */
  streamClosed(runId: string): void {
    if (this.config.onDisconnect !== 'cancel' || this.hub.followerCount(runId) > 0) return;
    this.handles.get(runId)?.stop('disconnected');
  }

  /**
   * Extends the leases of the runs this process drives, and stops those someone asked elsewhere to
   * cancel. A run whose lease is no longer this process's (another took it over while this one was
   * stalled, or it has ended) is let go at once: a tool it still runs is stopped rather than left
   * to finish beside the new owner.
   */
  async renewLeases(): Promise<void> {
    const sentAt = Date.now();
    const asked = this.localRunIds;
    const { renewed, cancelled } = await this.store.renewLeases(this.processId, asked);
    for (const runId of renewed) this.handles.get(runId)?.lease.renewed(sentAt);
    for (const runId of cancelled) this.handles.get(runId)?.stop('cancelled');
    const kept = new Set(renewed);
    for (const runId of asked)
      if (!kept.has(runId)) this.handles.get(runId)?.writeFailed(new LeaseLost(runId));
  }

  // ── internals ─────────────────────────────────────────────────────────────

  /** Drives `h` in the background; `firstCall`: its first model call, already sent. */
  private launch(h: RunHandle, firstCall?: SentModelCall): void {
    this.handles.set(h.run.id, h);
    this.hub.attach(h.sink);
    this.metrics.activeRuns.inc();
    // Every line about a run carries its ids; prompts and tool output stay out of the logs.
    const ids = {
      runId: h.run.id,
      sessionId: h.session.id,
      ...(h.trace.traceId === null ? {} : { trace_id: h.trace.traceId }),
    };
    this.logger.log({ ...ids, model: h.run.model, iteration: h.run.iterations, msg: 'driving run' });
    void this.orchestrator
      .drive(h, firstCall)
      .then(
        (outcome) => {
          h.trace.end(outcome);
          if (outcome === 'released') {
            this.logger.warn({
              ...ids,
              msg: `let the run go without ending it: ${h.released?.message ?? 'its writes failed'}`,
            });
            return;
          }
          this.logger.log({
            ...ids,
            outcome,
            iterations: h.run.iterations,
            usage: h.usage,
            msg: 'run paused or ended',
          });
          if (outcome !== 'requires_action')
            this.metrics.runFinished(outcome, Date.now() - h.run.createdAt.getTime());
        },
        (err: unknown) => {
          h.trace.end('failed', 'internal');
          this.logger.error({
            ...ids,
            msg: `run could not be ended cleanly: ${err instanceof Error ? err.message : String(err)}`,
          });
        },
      )
      .then(() => h.sink.close())
      .catch((err: unknown) =>
        this.logger.error({
          ...ids,
          msg: `run events not closed: ${err instanceof Error ? err.message : String(err)}`,
        }),
      )
      .finally(() => {
        this.hub.detach(h.sink);
        if (this.handles.get(h.run.id) === h) this.handles.delete(h.run.id);
        this.metrics.activeRuns.dec();
        h.markFinished();
      });
  }

  /** Takes up a run this process has just claimed after a wait (status `running`, leased to it). */
  takeUp(runId: string): Promise<void> {
    // The claim committed a moment ago and set the lease from then: count from about that time.
    return this.resume(runId, Date.now());
  }

  /**
   * Drives a run this process has just taken over from one that died or shut down (leased to it
   * since `claimedAt`); the loop first closes what the lost process left cut (RunTakeover).
   */
  takeOver(runId: string, reason: TakeOverReason, claimedAt: number): Promise<void> {
    this.logger.log({ runId, reason, msg: 'taking the run over' });
    return this.resume(runId, claimedAt, reason);
  }

  /** Rebuilds a run this process has claimed from the database, and drives it on. */
  private async resume(runId: string, claimedAt: number, takeOver?: TakeOverReason): Promise<void> {
    const run = await this.store.findRun(runId);
    if (!run || run.status !== 'running' || run.leaseOwner !== this.processId) return;
    const session = await this.sessionStore.find(run.sessionId, null);
    if (!session) return;
    const [conversation, previousCalls] = await Promise.all([
      this.conversation.runConversation(run.sessionId),
      this.conversation.runToolCallKeys(runId),
    ]);
    const callIds = new Set(previousCalls.map((c) => c.callId));
    const callCounts = new Map<string, number>();
    for (const c of previousCalls)
      callCounts.set(
        callKey(c.name, c.rawArguments),
        (callCounts.get(callKey(c.name, c.rawArguments)) ?? 0) + 1,
      );
    const firstSeq = conversation.find((m) => m.runId === runId && m.role === 'user')?.seq ?? 0;
    const h = this.newHandle(
      {
        run,
        session,
        conversation,
        callIds,
        callCounts,
        firstMessageSeq: firstSeq,
        nextMessageSeq: session.nextMessageSeq,
        resumesStep: true,
        takeOver,
        // The same trace as the run's first stretch, on whichever process drives it now.
        trace: this.tracing.startRun({ runId, sessionId: run.sessionId, model: run.model }, run.traceParent),
      },
      claimedAt,
    );
    if (run.cancelRequested) h.stop('cancelled');
    this.launch(h);
  }

  /**
   * A handle of a run this process is about to drive: its lease (set in the database at `leasedAt`)
   * and its sink, which holds `stored`, the last events of the log, for this process's streams.
   */
  private newHandle(
    init: Omit<RunHandleInit, 'sink' | 'lease' | 'toolset'> & { toolset?: Toolset },
    leasedAt: number,
    stored: SerializedEvent[] = [],
  ): RunHandle {
    const { run, session } = init;
    const lease = new RunLease(this.processId, this.config.runLeaseMs, leasedAt);
    const sink = new RunEventSink(
      run.id,
      run.lastSeq - stored.length,
      this.store,
      lease,
      this.wakes,
      (err) => this.writeFailed(run.id, err),
      stored,
    );
    return new RunHandle({
      ...init,
      sink,
      lease,
      toolset: init.toolset ?? new Toolset(this.registry, this.config, session),
    });
  }

  /**
   * A write of a run failed for good, or the run's lease is gone: the handle stops (and the loop
   * fails the run, or lets it go — then this process no longer renews its lease, and whichever
   * process sees the lease expired takes it over).
   */
  private writeFailed(runId: string, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    const traceId = this.handles.get(runId)?.trace.traceId ?? null;
    this.logger.error({
      runId,
      ...(traceId === null ? {} : { trace_id: traceId }),
      msg: isRunReleased(err) ? `letting the run go: ${message}` : `could not store events: ${message}`,
    });
    this.handles.get(runId)?.writeFailed(err);
  }
}

function isActive(run: RunRow): boolean {
  return run.status === 'running' || run.status === 'requires_action';
}

export function runNotFound(runId: string): DomainError {
  return new DomainError(ErrorCode.RunNotFound, `Run ${runId} not found`);
}
