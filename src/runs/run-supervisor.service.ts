import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { PeriodicTask } from '../common/backoff';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { RunLeases } from './run-leases.service';
import { LostRuns } from './lost-runs.service';
import { ToolCallDecisions } from './tool-call-decisions.service';
import { Delegations } from './delegations.service';
import { QueuedRuns } from './queued-runs.service';
import { BudgetStore } from '../store/budget-store.service';

const EXPIRY_EVERY_MS = 1000;
/**
 * How often expired leases are looked for: a run whose process died without a word is taken over
 * within about this much after its lease ran out (one indexed statement a second per process).
 */
const TAKEOVER_EVERY_MS = 1000;
/** How often waiting parents are looked at (one indexed statement; Delegations says why). */
const DELEGATIONS_EVERY_MS = 1000;
/**
 * How often idle sessions with queued runs are looked for: a queued run whose session's run ended
 * on a process that died (or was ended by a take-over, a cancel of a waiting run) starts within
 * about this much (one indexed statement a second per process). The process that ends a run it
 * drives starts the next at once.
 */
const QUEUE_SWEEP_EVERY_MS = 1000;
/**
 * How often the budget counters of ended runs (their own limits: `run/<id>`) are deleted: a run tree's
 * counter goes within about this much after its root ends (one statement on a partial index).
 */
const RUN_COUNTERS_EVERY_MS = 1000;
/**
 * Reservations no run holds (a start's first call, an on-demand summary) are given back by their
 * own statements; one whose process died is given back once older than this — longer than such a
 * call lasts — looked for this often.
 */
const ORPHAN_RESERVATION_MS = 15 * 60_000;
const ORPHANS_EVERY_MS = 60_000;
/**
 * How often every counter's spend deltas are folded in (BudgetStore.foldSpend): those no reservation
 * folds — a key no one uses now, a window that has rolled over — so the deltas do not pile up.
 */
const SPEND_FOLD_EVERY_MS = 10_000;

/**
 * The clocks of durable runs, on every process: waiting calls past their deadline are settled
 * (within about a second, also after a restart), this process's leases are renewed, and runs whose
 * process died are taken over (at start-up too: a lone server restarted continues its runs). A task
 * that fails (the database is gone) backs off to a try every 5 s (PeriodicTask) — but the lease
 * renewal, which keeps its period: renewing later than that would lose runs to a short outage.
 */
@Injectable()
export class RunSupervisor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RunSupervisor.name);
  private readonly tasks: PeriodicTask[] = [];

  constructor(
    private readonly leases: RunLeases,
    private readonly decisions: ToolCallDecisions,
    private readonly lostRuns: LostRuns,
    private readonly delegations: Delegations,
    private readonly queued: QueuedRuns,
    private readonly budgets: BudgetStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const lease = this.config.runLeaseMs;
    this.every(EXPIRY_EVERY_MS, 'settle expired calls', () => this.decisions.expireWaitingCalls());
    // Renewed three times a lease, so one slow renewal never loses a live run.
    const renewEvery = Math.floor(lease / 3);
    this.every(renewEvery, 'renew leases', () => this.leases.renew(), false, renewEvery);
    this.every(TAKEOVER_EVERY_MS, 'take runs over', () => this.lostRuns.check(), true);
    // A delegation a process could not move on (it died between a child's end and its answer).
    this.every(DELEGATIONS_EVERY_MS, 'move delegations on', () => this.delegations.sweep());
    this.every(QUEUE_SWEEP_EVERY_MS, 'start queued runs', () => this.queued.sweep(), true);
    this.every(RUN_COUNTERS_EVERY_MS, "forget ended runs' budget counters", () =>
      this.budgets.forgetEndedRuns(),
    );
    this.every(ORPHANS_EVERY_MS, 'give back reservations no run holds', () =>
      this.budgets.releaseOrphans(ORPHAN_RESERVATION_MS),
    );
    this.every(SPEND_FOLD_EVERY_MS, 'fold spent calls into the budget counters', () =>
      this.budgets.foldSpend(),
    );
  }

  onApplicationShutdown(): void {
    for (const t of this.tasks) t.stop();
  }

  private every(ms: number, what: string, task: () => Promise<void>, now = false, maxMs?: number): void {
    const periodic = new PeriodicTask(
      task,
      ms,
      (err) => this.logger.warn(`could not ${what}: ${err instanceof Error ? err.message : String(err)}`),
      { maxMs },
    );
    periodic.start(now);
    this.tasks.push(periodic);
  }
}
