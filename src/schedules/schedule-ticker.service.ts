import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Draining } from '../common/draining.service';
import { Runs } from '../runs/runs.service';
import { ScheduleStore, type ClaimedDueTime } from '../store/schedule-store.service';
import { nextDueTime } from './cron';

/**
 * How often each process looks for due schedules: a run starts within about this much after its due
 * time (the contract allows 30 s). One indexed statement per tick per process.
 */
const TICK_MS = 5000;
/** Due schedules one tick claims at most; the next tick takes the rest. */
const CLAIM_LIMIT = 20;
/** A claimed due time still not started after this lost its process between the claim and the start. */
const ABANDONED_AFTER_MS = 10_000;
/** An abandoned due time is started by another process if it is not older than this; else skipped. */
const LATE_START_WITHIN_MS = 10 * 60_000;

/**
 * Starts the runs of due schedules, on every process: each tick claims due schedules (exactly one
 * process gets each, ScheduleStore.claimDue), records the due time once and moves the schedule on
 * in the same transaction, then starts each run through the normal start path with the schedule's
 * onActive. A busy session whose queue is full (or a schedule that rejects) skips that due time. A
 * due time whose claimant died before it started is claimed again by the next tick of any process
 * after ABANDONED_AFTER_MS (so it starts within about 15 s of when it would have) and started under
 * the due time's Idempotency key, so it starts once even if the first claimant got that far.
 */
@Injectable()
export class ScheduleTicker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ScheduleTicker.name);
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(
    private readonly store: ScheduleStore,
    private readonly runs: Runs,
    private readonly draining: Draining,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
    setImmediate(() => void this.tick());
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** One look for due schedules; a tick still at work when the next comes makes that one a no-op. */
  async tick(): Promise<void> {
    if (this.busy || this.draining.active) return;
    this.busy = true;
    try {
      const claimed = await this.store.claimDue(CLAIM_LIMIT, (s) =>
        nextDueTime(s.cron, s.timezone, new Date()),
      );
      for (const due of claimed) await this.start(due);
      const lost = await this.store.reclaimAbandoned(ABANDONED_AFTER_MS, LATE_START_WITHIN_MS, CLAIM_LIMIT);
      for (const due of lost) await this.start(due);
    } catch (err) {
      this.logger.warn(`could not start due schedules: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      this.busy = false;
    }
  }

  private async start({ scheduleRunId, schedule, dueAt }: ClaimedDueTime): Promise<void> {
    const ids = { scheduleId: schedule.id, dueAt: dueAt.toISOString() };
    let outcome: { runId: string; sessionId: string } | 'skipped';
    try {
      const started = await this.runs.start(schedule.owner, {
        prompt: schedule.prompt,
        // The due time's own key: started again after its claimant died, it finds the run that
        // claimant started (if it did) instead of starting a second one.
        idempotency: { scope: 'schedule', key: scheduleRunId, request: { scheduleRunId } },
        ...(schedule.sessionId
          ? { sessionId: schedule.sessionId, onActive: schedule.onActive }
          : { session: schedule.sessionOptions }),
      });
      outcome = { runId: started.runId, sessionId: started.sessionId };
      this.logger.log({ ...ids, runId: started.runId, msg: 'scheduled run started' });
    } catch (err) {
      // A busy session with a full queue (or onActive reject), the key's limits, a session gone.
      outcome = 'skipped';
      this.logger.warn({
        ...ids,
        msg: `due time skipped: ${err instanceof Error ? err.message : String(err)}`,
      });
    }
    await this.store.settleDueTime(scheduleRunId, outcome);
  }
}
