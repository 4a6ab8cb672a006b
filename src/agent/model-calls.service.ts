import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { ModelError, type ModelRequest, type ModelStreamEvent } from '../llm/model-provider';
import { ModelProviders, splitModelName } from '../llm/model-providers';
import { SentModelCall } from '../llm/sent-model-call';
import { MetricsService } from '../metrics/metrics.service';
import type { RunRow } from '../store/run-store.service';
import type { SessionRow } from '../store/session-store.service';
import { ContextTooLong, ContextWindow, isContextTooLong } from './context-window';
import { modelMessages } from './conversation';
import { EarlyReads } from './early-reads';
import { RunAccounting } from './run-accounting';
import type { RunHandle } from './run-handle';
import { RunTools } from './run-tools.service';
import type { ModelTurn } from './step-record';

/** What a model call of a run is made of: the run's model and progress, its conversation and tools. */
export type ModelCallSource = Pick<RunHandle, 'conversation' | 'toolset'> & {
  run: Pick<RunRow, 'model' | 'iterations' | 'maxIterations'>;
  session: { reasoning?: SessionRow['reasoning'] };
};

/**
 * One model call of a run, from where it starts to where it ends — the one place a run's answer is
 * asked for: the request from the stored conversation (`send`, through ModelProviders, which picks
 * the provider or a fallback and holds it to the idle timeout and the answer budget — the one way
 * to a model, a summary's call included), room made first when the context is near the window
 * (`makeRoom`, ContextWindow), a call sent ahead of the loop
 * when it surely fits (`sendAhead`: a run's first with its start, FirstCallsAhead; the next once a
 * step's results are known), and its answer read to the end (`read`: text and reasoning streamed,
 * speculative reads started, the finish priced, traced and counted).
 */
@Injectable()
export class ModelCalls {
  constructor(
    private readonly models: ModelProviders,
    private readonly tools: RunTools,
    private readonly metrics: MetricsService,
    private readonly accounting: RunAccounting,
    private readonly window: ContextWindow,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Sends the run's next model call: the conversation the model gets (ContextWindow made room for
   * it), the session's tools (none allowed on the last call the cap leaves, so the person still
   * gets an answer).
   */
  private send(r: ModelCallSource, signal: AbortSignal): SentModelCall {
    const tools = r.toolset.definitions;
    const lastCall = r.run.iterations + 1 >= r.run.maxIterations;
    const request: ModelRequest = {
      model: r.run.model,
      messages: modelMessages(r.conversation, this.window.toolResultMaxChars(r.run.model)),
      tools,
      toolChoice: tools.length > 0 && lastCall ? 'none' : undefined,
      reasoning: r.session.reasoning ?? this.config.llm.reasoning,
      maxOutputTokens: this.config.llm.maxOutputTokens,
    };
    // ModelProviders picks the provider (or a fallback) and holds the call to its limits.
    return new SentModelCall(this.models, request, signal);
  }

  /**
   * Sends a model call ahead of the loop (the next one once a step's results are known, a run's
   * first while its start commits) when it surely fits under COMPACT_AT as it is; otherwise
   * nothing, and the loop sends the call itself once ContextWindow.fit has made room — compaction
   * needs a model call and a commit of its own, which only the loop makes. What sending ahead gains
   * is measured in FirstCallsAhead's comment (3–4 ms of the first text at c=16).
   */
  sendAhead(r: ModelCallSource, signal: AbortSignal): SentModelCall | undefined {
    const fits = this.window.fitsAsIs({
      model: r.run.model,
      rows: r.conversation,
      tools: r.toolset.definitions,
    });
    return fits ? this.send(r, signal) : undefined;
  }

  /**
   * Makes room for the loop's own model call (ContextWindow.fit), before `read` sends it; true when
   * that took a model call of its own (a summary), which the limits must then see.
   */
  makeRoom(h: RunHandle): Promise<boolean> {
    return this.window.fit(h);
  }

  /**
   * Reads a model call (`sent`, or one sent now — room made first, `makeRoom`) to its end,
   * streaming its text; the reads it asks for start as soon as their arguments are whole (`early`,
   * for the step to take). A call the upstream refuses as longer than the window is sent once more
   * after compacting as far as the rules allow.
   */
  async read(h: RunHandle, sent?: SentModelCall): Promise<{ turn: ModelTurn; early: EarlyReads }> {
    let call = sent ?? this.send(h, h.signal);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.readToEnd(h, call);
      } catch (err) {
        if (!isContextTooLong(err) || h.streamingText !== '') throw err;
        if (attempt > 1)
          throw new ContextTooLong(
            `The model refused the request as too long after compaction: ${(err as Error).message}`,
          );
        await this.window.fit(h, true);
        call = this.send(h, h.signal);
      }
    }
  }

  private async readToEnd(
    h: RunHandle,
    stream: SentModelCall,
  ): Promise<{ turn: ModelTurn; early: EarlyReads }> {
    h.streamingText = '';
    let reasoning = '';
    // A silent upstream is the provider's to time out (LLM_IDLE_TIMEOUT_MS): it throws UPSTREAM_TIMEOUT.
    const started = stream.sentAt;
    const early = new EarlyReads((call, signal) => this.tools.startEarly(h, call, signal), h.signal);
    let firstTokenMs: number | null = null;
    try {
      for await (const event of stream) {
        firstTokenMs ??= performance.now() - started;
        switch (event.type) {
          case 'text':
            h.streamingText += event.delta;
            h.sink.emit({ type: 'text', delta: event.delta });
            break;
          case 'tool_call_delta':
            early.see(event);
            break;
          case 'reasoning':
            reasoning += event.delta;
            h.sink.emit({ type: 'reasoning', delta: event.delta });
            break;
          case 'finish':
            this.metrics.modelCall('ok', performance.now() - started, firstTokenMs);
            this.metrics.tokensUsed(event.usage.promptTokens, event.usage.completionTokens);
            return { turn: this.finishedTurn(h, stream.request, event, started, reasoning), early };
        }
      }
      throw new ModelError('UPSTREAM_CONNECTION', 'The model stream ended without finishing.', true);
    } catch (err) {
      early.stop();
      const asked = splitModelName(h.run.model);
      h.trace.modelCall({
        provider: asked.provider,
        requestModel: asked.model,
        maxTokens: stream.request.maxOutputTokens,
        startedAt: epochOf(started),
        input: () => stream.request.messages,
        error: err instanceof ModelError ? err.code : h.signal.aborted ? 'aborted' : 'internal',
      });
      this.metrics.modelCall(
        h.signal.aborted ? 'aborted' : 'error',
        performance.now() - started,
        firstTokenMs,
      );
      throw err;
    }
  }

  /** The model's answer as the step takes it, priced (its usage row) and traced. */
  private finishedTurn(
    h: RunHandle,
    request: ModelRequest,
    finish: Extract<ModelStreamEvent, { type: 'finish' }>,
    started: number,
    reasoning: string,
  ): ModelTurn {
    const priced = this.accounting.price(h.run.model, finish.usage, finish.model);
    const text = h.streamingText;
    // The GenAI attributes name a model as the provider that answered (a fallback's) was sent it.
    const sent = splitModelName(finish.model ?? h.run.model);
    h.trace.modelCall({
      provider: sent.provider,
      requestModel: sent.model,
      responseId: finish.responseId,
      server: finish.server,
      maxTokens: request.maxOutputTokens,
      startedAt: epochOf(started),
      finishReason: finish.finishReason,
      usage: finish.usage,
      input: () => request.messages,
      output: () => ({ text, reasoning, toolCalls: finish.toolCalls }),
    });
    return {
      text,
      finishReason: finish.finishReason,
      usage: finish.usage,
      toolCalls: finish.toolCalls,
      reasoning,
      providerData: finish.providerData,
      model: finish.model,
      modelCall: this.accounting.modelCall(h, h.run.iterations + 1, finish.usage, priced),
    };
  }
}

/** The wall-clock time of a `performance.now()` instant. */
function epochOf(performanceMs: number): number {
  return Date.now() - (performance.now() - performanceMs);
}
