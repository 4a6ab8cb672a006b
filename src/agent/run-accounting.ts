import { Injectable } from '@nestjs/common';
import type { RunEventBody } from '../events/run-events';
import type { SqlStatement } from '../store/run-store.service';
import { UsageStore, type NewModelCall } from '../store/usage-store.service';
import { BudgetGuard, type BudgetExceeded } from './budget-guard';
import type { RunHandle } from './run-handle';
import { runUsage } from './step-record';

/**
 * A run's spending, at the loop's few points: the statements that store a model call's usage row
 * (ModelCallRecorder's, in the statement of its step) and move its key's windows, and the limits
 * before every model call.
 */
@Injectable()
export class RunAccounting {
  constructor(
    private readonly usage: UsageStore,
    private readonly budgets: BudgetGuard,
  ) {}

  /**
   * Stores a model call made for a session outside any run (the summary of `POST
   * /v1/sessions/:id/compact`), as ModelCallRecorder recorded it: its row, and its tokens and cost
   * in the key's windows.
   */
  async storeSessionCall(call: NewModelCall): Promise<void> {
    await this.usage.write(this.usageWrites(call));
  }

  /** The statements that store a call's usage and move its key's window counters, for the statement of what the call belongs to (its step, a compaction). */
  usageWrites(call: NewModelCall): SqlStatement[] {
    const writes = [this.usage.insertModelCallSql(call)];
    const windows = this.budgets.windows(call.owner);
    if (windows.length > 0) {
      writes.push(
        this.usage.addSpendSql(call.owner, windows, call.promptTokens + call.completionTokens, call.costUsd),
      );
    }
    return writes;
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
    await h.sink.commitWrites([done], [], {
      status: 'budget_exceeded',
      finalMessageId: h.lastAssistantMessageId,
      finished: true,
    });
  }
}
