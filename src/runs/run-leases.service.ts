import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { Draining } from '../common/draining.service';
import { RunStore } from '../store/run-store.service';
import { LeaseLost } from '../store/store-errors';
import { DrivenRuns } from './driven-runs.service';

/**
 * The leases of the runs this process drives: kept alive while it drives them (RunSupervisor renews
 * them), given up when it shuts down. A lease is what lets exactly one process write a run, so a
 * run whose lease this process lost is let go at once, and one it gives up is another's to continue.
 */
@Injectable()
export class RunLeases implements BeforeApplicationShutdown {
  private readonly logger = new Logger(RunLeases.name);

  constructor(
    private readonly store: RunStore,
    private readonly driven: DrivenRuns,
    private readonly draining: Draining,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Extends the leases of the runs this process drives, and stops those someone asked elsewhere to
   * cancel. A run whose lease is no longer this process's (another took it over while this one was
   * stalled, or it has ended) is let go at once: a tool it still runs is stopped rather than left
   * to finish beside the new owner.
   */
  async renew(): Promise<void> {
    const sentAt = Date.now();
    const asked = this.driven.localRunIds;
    const { renewed, cancelled } = await this.store.renewLeases(this.driven.processId, asked);
    for (const runId of renewed) this.driven.get(runId)?.lease.renewed(sentAt);
    for (const runId of cancelled) this.driven.get(runId)?.stop('cancelled');
    const kept = new Set(renewed);
    for (const runId of asked)
      if (!kept.has(runId)) this.driven.get(runId)?.writeFailed(new LeaseLost(runId));
  }

  /**
   * Stops taking runs, lets the running ones finish within the grace period, then hands the rest
   * over: their leases are given up at once (with a notice), so another process continues them
   * within about a second — or, with none, this server when it starts again.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.draining.start();
    const graceOver = new Promise<void>((resolve) =>
      setTimeout(resolve, this.config.shutdownGraceMs).unref(),
    );
    await Promise.race([this.driven.allFinished(), graceOver]);
    await this.handOver();
    await this.driven.allFinished();
  }

  /**
   * Gives up the leases of the runs this process still drives, then stops them (they write nothing
   * more). When the leases cannot be given up (the store is down), the runs are taken over once
   * they expire, as after a crash.
   */
  private async handOver(): Promise<void> {
    const runIds = this.driven.localRunIds;
    if (runIds.length === 0) return;
    try {
      const given = await this.store.releaseLeases(this.driven.processId, runIds);
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
    for (const runId of runIds) this.driven.get(runId)?.handOver();
  }
}
