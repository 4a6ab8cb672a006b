import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import type { ServerAddress, Usage } from '../llm/model-provider';
import { fullModelName, splitModelName } from '../llm/model-name';
import { ModelPrices } from '../llm/model-prices.service';
import { Metrics } from '../metrics/metrics.service';
import type { RunTrace, TracedAnswer } from '../observability/run-tracing.service';
import type { NewModelCall } from '../store/usage-store.service';
import { completeUsage, type SentAndStreamed } from './usage-estimate';

/** One model call as it ended, whatever it was for (a step, an automatic or an on-demand summary). */
export interface EndedCall extends SentAndStreamed {
  /** Whose call it was: its run (null for an on-demand summary), session and key. */
  of: Pick<NewModelCall, 'runId' | 'sessionId' | 'owner' | 'endUser'>;
  /** The step it belongs to (or comes before); 0 outside any run. */
  iteration: number;
  /** What the provider reported at the finish; null when the call never finished. */
  reported: Usage | null;
  /** The `provider/model` that answered (a fallback's), when it finished. */
  answeredBy?: string;
  finishReason?: string;
  /** The upstream's id of the answer and where the request went, when it finished (its span's). */
  responseId?: string;
  server?: ServerAddress;
  /** Why the call was made, when not for a step of a run. */
  purpose?: 'summary';
  /** performance.now() when the request went out; null when not known here (a call of a process that died). */
  sentAt: number | null;
  firstTokenMs: number | null;
  /**
   * How a call without a finish ended: `aborted` (cancelled), `interrupted` (its process died; the
   * run was taken over), or its error code.
   */
  failure?: string;
  /** Where its `chat` span goes. */
  trace: RunTrace;
  /** The answer, for the span when content capture is on. */
  output?: () => TracedAnswer;
}

/** A call as recorded: its usage (estimated where the provider said nothing), cost and row. */
export interface RecordedCall {
  usage: Usage;
  costUsd: number | null;
  row: NewModelCall;
}

/**
 * The one place a model call is accounted for, for every purpose: it is priced, metered
 * (/metrics), traced (its `chat` span) and given its usage row, which the caller stores in the
 * journal entry of what the call belongs to (RunAccounting.spent). A call the provider did not
 * report in full — cut by ANSWER_MAX_BYTES, cancelled, failed after it streamed — has its usage
 * estimated from what was sent and streamed (usage-estimate.ts) and marked `estimated`; so has the
 * call a dead process was in (RunTakeover). A call that failed before it streamed anything, and was
 * neither cancelled nor interrupted, is metered and traced but not counted: the upstream refused it.
 */
@Injectable()
export class ModelCallRecorder {
  /** The models /metrics names; any other is `other` (labels stay a bounded set). */
  private readonly metricModels: ReadonlySet<string>;

  constructor(
    private readonly prices: ModelPrices,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.metricModels = new Set([fullModelName(config.llm.model), ...Object.keys(config.modelPrices)]);
  }

  /** A call that finished (its report, completed by an estimate where it lacks counts), or one that was sent and cut: counted. */
  record(
    call: EndedCall & ({ reported: Usage } | { failure: 'aborted' | 'interrupted' }),
  ): Promise<RecordedCall>;
  /** Any other call that ended without a finish: counted when it streamed something, else null. */
  record(call: EndedCall): Promise<RecordedCall | null>;
  async record(call: EndedCall): Promise<RecordedCall | null> {
    const ms = call.sentAt === null ? 0 : performance.now() - call.sentAt;
    const sent = call.failure === 'aborted' || call.failure === 'interrupted';
    const counted = call.reported !== null || sent || call.streamed !== '';
    const usage = counted ? await completeUsage(call.reported, call) : null;
    const model = fullModelName(call.answeredBy ?? call.request.model);
    const { provider } = splitModelName(model);
    const costUsd = usage ? this.prices.costUsd(model, usage) : null;
    if (call.sentAt !== null) {
      this.metrics.modelCall(
        call.failure === undefined ? 'ok' : call.failure === 'aborted' ? 'aborted' : 'error',
        ms,
        call.firstTokenMs,
      );
    }
    if (usage) {
      this.metrics.tokensUsed(usage.promptTokens, usage.completionTokens);
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
    }
    // The GenAI attributes name a model as the provider that answered (a fallback's) was sent it.
    call.trace.modelCall({
      provider,
      requestModel: splitModelName(model).model,
      startedAt: Date.now() - ms,
      ...(call.request.maxOutputTokens === undefined ? {} : { maxTokens: call.request.maxOutputTokens }),
      input: () => call.request.messages,
      ...(call.responseId === undefined ? {} : { responseId: call.responseId }),
      ...(call.server === undefined ? {} : { server: call.server }),
      ...(call.purpose === undefined ? {} : { purpose: call.purpose }),
      ...(call.finishReason === undefined ? {} : { finishReason: call.finishReason }),
      ...(usage ? { usage } : {}),
      ...(call.output ? { output: call.output } : {}),
      ...(call.failure === undefined ? {} : { error: call.failure }),
    });
    if (!usage) return null;
    const row: NewModelCall = {
      id: randomUUID(),
      ...call.of,
      iteration: call.iteration,
      provider,
      model,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      cacheReadTokens: usage.cacheReadTokens ?? 0,
      cacheWriteTokens: usage.cacheWriteTokens ?? 0,
      reasoningTokens: usage.reasoningTokens ?? 0,
      costUsd,
      estimated: usage.estimated === true,
    };
    return { usage, costUsd, row };
  }
}
