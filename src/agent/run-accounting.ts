import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import type { Usage } from '../llm/model-provider';
import { ModelPrices, qualifiedModel } from '../llm/model-prices';
import { MetricsService } from '../metrics/metrics.service';
import type { RunEventBody } from '../events/run-events';
import type { SqlStatement } from '../store/run-store.service';
import { UsageStore, type NewModelCall } from '../store/usage-store.service';
import { BudgetGuard, type BudgetExceeded } from './budget-guard';
import type { RunHandle } from './run-handle';

/** What one model call cost, and which model answered it. */
export interface PricedCall {
  provider: string;
  /** `provider/model`. */
  model: string;
  costUsd: number | null;
}

/**
 * A run's spending, at the loop's few points: the price of a model call as it finishes, the usage
 * rows its step stores (in the step's own statement), and the limits before every model call.
 */
@Injectable()
export class RunAccounting {
  /** The models /metrics names; any other is `other` (labels stay a bounded set). */
  private readonly metricModels: ReadonlySet<string>;

  constructor(
    private readonly prices: ModelPrices,
    private readonly usage: UsageStore,
    private readonly budgets: BudgetGuard,
    private readonly metrics: MetricsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.metricModels = new Set([qualifiedModel(config.llm.model).model, ...Object.keys(config.modelPrices)]);
  }

  /** Prices a finished model call of a run on `runModel`; `answeredBy` is the finish's model, if any. */
  price(runModel: string, usage: Usage, answeredBy?: string): PricedCall {
    const { provider, model } = qualifiedModel(answeredBy ?? runModel);
    const costUsd = this.prices.costUsd(model, usage);
    this.metrics.modelUsage(
      provider,
      this.metricModels.has(model) ? model : 'other',
      {
        prompt: usage.promptTokens,
        completion: usage.completionTokens,
        cacheRead: usage.cacheReadTokens ?? 0,
      },
      costUsd,
    );
    return { provider, model, costUsd };
  }

  /** The model call's row for its step's record (pure). */
  modelCall(h: RunHandle, iteration: number, usage: Usage, priced: PricedCall): NewModelCall {
    const { id: runId, sessionId, owner } = h.run;
    return callRow({ runId, sessionId, owner }, iteration, usage, priced);
  }

  /**
   * Stores a model call made for a session outside any run (the summary of `POST
   * /v1/sessions/:id/compact`), priced: its row, and its tokens and cost in the key's windows.
   */
  async storeSessionCall(
    owner: string,
    sessionId: string,
    model: string,
    usage: Usage,
    answeredBy?: string,
  ): Promise<void> {
    const row = callRow({ runId: null, sessionId, owner }, 0, usage, this.price(model, usage, answeredBy));
    await this.usage.write(this.usageWrites(row));
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
      usage: { promptTokens: run.promptTokens, completionTokens: run.completionTokens, costUsd: run.costUsd },
      messageId: h.lastAssistantMessageId,
    };
    await h.sink.commitWrites([done], [], {
      status: 'budget_exceeded',
      finalMessageId: h.lastAssistantMessageId,
      finished: true,
    });
  }
}

/** A run's cost with one more call's: unknown only while no call had a price. */
export function addCost(total: number | null, call: number | null): number | null {
  return call === null ? total : (total ?? 0) + call;
}

/** A model call's usage row (pure). */
function callRow(
  of: Pick<NewModelCall, 'runId' | 'sessionId' | 'owner'>,
  iteration: number,
  usage: Usage,
  priced: PricedCall,
): NewModelCall {
  return {
    id: randomUUID(),
    ...of,
    iteration,
    provider: priced.provider,
    model: priced.model,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    cacheReadTokens: usage.cacheReadTokens ?? 0,
    cacheWriteTokens: usage.cacheWriteTokens ?? 0,
    reasoningTokens: usage.reasoningTokens ?? 0,
    costUsd: priced.costUsd,
  };
}
