import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { Draining } from '../common/draining.service';
import { Metrics } from '../metrics/metrics.service';
import { PgNotifications } from '../persistence/pg-notifications.service';
import { RunStopped } from '../agent/run-handle';
import { ConversationStore } from '../store/conversation-store.service';
import { RUN_HANDOVER_CHANNEL, RunStore } from '../store/run-store.service';
import { finishDetachedRun } from './detached-runs';
import { RunTakeover } from '../agent/run-takeover.service';
import { DrivenRuns } from './driven-runs.service';
import { ResumedRuns } from './resumed-runs.service';
import { RunJournal } from '../store/run-journal.service';

/** Runs claimed by one statement: a bound on the work one check starts at once. */
const CLAIM_AT_ONCE = 100;

/**
 * Runs whose process died or shut down ("Runs outlive their process"): each is claimed by exactly
 * one live process in one statement (RunStore.claimExpiredRuns) and driven on from what is stored.
 * A run lost more than RUN_MAX_RESUMES times fails (RUN_ABANDONED) instead, and one asked to cancel
 * while nobody drove it is cancelled. Checked when a process announces it gave leases up (a
 * shutdown, within about a second), at start-up, and every second (RunSupervisor) for the leases
 * of processes that died without a word.
 */
@Injectable()
export class LostRuns implements OnModuleInit {
  private readonly logger = new Logger(LostRuns.name);
  private checking: Promise<void> | null = null;
  private checkAgain = false;

  constructor(
    private readonly store: RunStore,
    private readonly conversation: ConversationStore,
    private readonly driven: DrivenRuns,
    private readonly resumed: ResumedRuns,
    private readonly notifications: PgNotifications,
    private readonly metrics: Metrics,
    private readonly draining: Draining,
    private readonly takeover: RunTakeover,
    private readonly journal: RunJournal,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.notifications.listen(RUN_HANDOVER_CHANNEL, () => {
      this.check().catch((err: Error) => this.logger.warn(`could not take runs over: ${err.message}`));
    });
  }

  /**
   * Takes over every run whose lease has expired, and ends those that are not to be taken over.
   * Calls while a check is under way make one more check after it (a shutdown's notices come in a
   * burst: one or two checks take them all).
   */
  check(): Promise<void> {
    if (this.checking) {
      this.checkAgain = true;
      return this.checking;
    }
    const checking = (async () => {
      do {
        this.checkAgain = false;
        await this.checkOnce();
      } while (this.checkAgain);
    })().finally(() => (this.checking = null));
    this.checking = checking;
    return checking;
  }

  private async checkOnce(): Promise<void> {
    // A process shutting down takes nothing over: it hands its own runs over.
    if (this.draining.active) return;
    const claimedAt = Date.now();
    const claimed = await this.store.claimExpiredRuns(
      this.driven.processId,
      this.config.runMaxResumes,
      CLAIM_AT_ONCE,
      this.driven.heldRunIds,
    );
    // More may be waiting: claim them right after these (another process may take some meanwhile).
    if (claimed.length === CLAIM_AT_ONCE) this.checkAgain = true;
    await Promise.all(
      claimed.map(async ({ id, reason }) => {
        this.metrics.runTakenOver(reason);
        await this.resumed
          .takeOver(id, reason, claimedAt)
          // Not driven here: its lease is not renewed, so it expires and the run is taken over again.
          .catch((err: Error) =>
            this.logger.error({ runId: id, msg: `could not take the run over: ${err.message}` }),
          );
      }),
    );
    for (const { id, cancelRequested } of await this.store.endableRuns(this.config.runMaxResumes)) {
      await finishDetachedRun(
        this.store,
        this.conversation,
        this.journal,
        this.metrics,
        id,
        cancelRequested
          ? { status: 'cancelled', why: new RunStopped('cancelled').message }
          : {
              status: 'failed',
              error: {
                code: 'RUN_ABANDONED',
                message: `The run lost its server process more often than it may be taken over (RUN_MAX_RESUMES=${this.config.runMaxResumes}).`,
                retryable: true,
              },
            },
        this.takeover,
      );
    }
  }
}
