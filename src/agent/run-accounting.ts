import { Injectable } from '@nestjs/common';
import type { RunEventBody } from '../events/run-events';
import { RunJournal } from '../store/run-journal';
import { UsageStore, type NewModelCall, type SpentCall } from '../store/usage-store.service';
import { BudgetGuard, type BudgetExceeded } from './budget-guard';
import type { RunHandle } from './run-handle';
import { runUsage } from './step-record';

/**
 * A run's spending, at the loop's few points: a model call's usage row (ModelCallRecorder's, in
 * the journal entry of its step) with the windows of its key it moves, and the limits
 * before every model call.
 */
@Injectable()
export class RunAccounting {
  constructor(
    private readonly usage: UsageStore,
    private readonly budgets: BudgetGuard,
    private readonly journal: RunJournal,
  ) {}

  /**
   * Stores a model call made for a session outside any run (the summary of `POST
   * /v1/sessions/:id/compact`), as ModelCallRecorder recorded it: its row, and its tokens and cost
   * in the key's windows.
   */
  async storeSessionCall(call: NewModelCall): Promise<void> {
    await this.usage.write(this.spent(call));
  }

  /** A call's usage row with the windows of its key's spend it moves, for the journal entry of what the call belongs to (its step, a compaction). */
  spent(call: NewModelCall): SpentCall {
    return { row: call, windows: this.budgets.windows(call.owner) };
  }

  /**
   * Whether the run's calls must each wait for a check (see BudgetGuard): then the loop sends no
   * call ahead of its step's commit.
   */
  limited(h: RunHandle): boolean {
    return this.budgets.applies(h.run.owner, h.session);
  }

  /** The limit the run's next model call would start over, or null. */
  exceeded(h: RunHandle): Promise<BudgetExceeded | null> {
    return this.limited(h) ? this.budgets.exceeded(h.run, h.session) : Promise.resolve(null);
  }

  /**
   * Ends a run whose next call would start over a limit, like the iteration cap: its steps and their
   * results are stored (the loop checks between steps), so its history is well-paired and its text
   * kept; `done` says `budget_exceeded`, in the statement that sets the status.
   */
  async endOverBudget(h: RunHandle): Promise<void> {
    const { run } = h;
    const done: RunEventBody = {
      type: 'done',
      sessionId: run.sessionId,
      status: 'budget_exceeded',
      iterations: run.iterations,
      usage: runUsage(run),
      messageId: h.lastAssistantMessageId,
    };
    await h.sink.record([done], (at) =>
      this.journal.recordRun(at, {
        status: 'budget_exceeded',
        finalMessageId: h.lastAssistantMessageId,
        finished: true,
      }),
    );
  }
}
