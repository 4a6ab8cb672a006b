import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { ServerProcess } from '../common/server-process.service';
import { Metrics } from '../metrics/metrics.service';
import { ToolRegistry } from '../tools/tool-registry.service';
import { Toolset } from '../tools/toolset';
import { RunEventHub } from '../events/run-event-hub.service';
import { RunEventSink } from '../events/run-event-sink';
import type { SerializedEvent } from '../events/run-events';
import { RunLease } from '../events/run-lease';
import { RunHandle, type RunHandleInit } from '../agent/run-handle';
import { RunOrchestrator, type DriveOutcome } from '../agent/run-orchestrator.service';
import { RunStore, type RunRow } from '../store/run-store.service';
import { isRunReleased } from '../store/store-errors';

/**
 * The runs this process drives, one handle each (its lease and its event sink), from the moment a
 * start or a take-up hands one over until the loop has paused, ended or let it go. A handle enters
 * and leaves this process here only, so the ids below are always what the process holds — what
 * its leases renew, what a start counts against MAX_ACTIVE_RUNS, what it must not take over.
 */
/** A session a run of this process ended: whether a prompt waited in it then (null: not known). */
type SessionFreed = (sessionId: string, queued: boolean | null) => void;

@Injectable()
export class DrivenRuns {
  private readonly logger = new Logger(DrivenRuns.name);
  private readonly handles = new Map<string, RunHandle>();
  private readonly settledListeners: ((run: RunRow, outcome: DriveOutcome) => void)[] = [];
  private readonly freed: SessionFreed[] = [];

  constructor(
    private readonly store: RunStore,
    private readonly hub: RunEventHub,
    private readonly orchestrator: RunOrchestrator,
    private readonly registry: ToolRegistry,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly process: ServerProcess,
  ) {}

  /**
   * `listener` hears of every run this process drove that then waited or ended (not of one it let
   * go): Delegations moves a parent's delegations on from there, without the loop knowing of them.
   */
  onSettled(listener: (run: RunRow, outcome: DriveOutcome) => void): void {
    this.settledListeners.push(listener);
  }

  /** Names this process in run leases. */
  get processId(): string {
    return this.process.id;
  }

  /** The handle of a run this process holds (driven or winding down), if any. */
  get(runId: string): RunHandle | undefined {
    return this.handles.get(runId);
  }

  /** How many handles this process holds, those winding down included: each still holds its work. */
  get size(): number {
    return this.handles.size;
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

  /** Settles once every handle held now has finished. */
  async allFinished(): Promise<void> {
    await Promise.all([...this.handles.values()].map((h) => h.done));
  }

  /**
   * A handle of a run this process is about to drive: its lease (set in the database at `leasedAt`)
   * and its sink, which holds `stored`, the last events of the log, for this process's streams.
   */
  newHandle(
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
   * Calls `listener` with the session of each run this process ends (its session is idle then), and
   * whether a prompt waited in it when the run's last statement ran (null: not known).
   */
  onSessionFreed(listener: SessionFreed): void {
    this.freed.push(listener);
  }

  /** Drives `h` in the background. */
  launch(h: RunHandle): void {
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
    let ended = false;
    void this.orchestrator
      .drive(h)
      .then(
        (outcome) => {
          h.trace.end(outcome);
          ended = outcome !== 'released' && outcome !== 'requires_action';
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
          for (const listener of this.settledListeners) listener(h.run, outcome);
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
        if (ended) for (const listener of this.freed) listener(h.session.id, h.queuedAtEnd);
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
