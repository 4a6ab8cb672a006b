import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { DEFAULT_RESPONSE_FORMAT_NAME } from '../common/response-format';
import { ModelError, type ModelRequest, type ModelStreamEvent } from '../llm/model-provider';
import { ModelProviders } from '../llm/model-providers.service';
import { SentModelCall } from '../llm/sent-model-call';
import { FileStore } from '../store/file-store.service';
import type { RunRow } from '../store/run-store.service';
import type { SessionRow } from '../store/session-store.service';
import { registryTakesImages } from '../llm/model-registry';
import { withoutVisualFiles } from '../llm/visual-files';
import { ContextTooLong, ContextWindow, isContextTooLong } from './context-window.service';
import { modelMessages } from './conversation';
import { ModelCallRecorder, type EndedCall, type RecordedCall } from './model-call-recorder.service';
import type { RunHandle } from './run-handle';
import { RecordedFailure, RecordedRuns } from './recorded-runs.service';
import { RunAccounting } from './run-accounting.service';
import type { ModelTurn } from './step-record';

/** What a model call of a run is made of: the run's model and progress, its conversation and tools. */
export type ModelCallSource = Pick<RunHandle, 'conversation' | 'toolset'> & {
  /** `replay`: a replay's recorded steps are answered from the record (RecordedRuns), the rest live. */
  run: Pick<RunRow, 'model' | 'iterations' | 'maxIterations' | 'responseFormat' | 'replay'>;
  session: { reasoning?: SessionRow['reasoning'] };
};

/**
 * One model call of a run, from where it starts to where it ends — the one place a run's answer is
 * asked for: the request from the stored conversation (`send`, through ModelProviders, which picks
 * the provider or a fallback and holds it to the idle timeout and the answer budget — the one way
 * to a model, a summary's call included), room made first when the context is near the window
 * (`makeRoom`, ContextWindow), a call sent ahead of the loop when it surely fits (`fitsAhead`: a
 * run's first with its start, CallsAhead), and its answer read to the end (`read`: text and
 * reasoning streamed, the call recorded by ModelCallRecorder — also one that never finished).
 */
@Injectable()
export class ModelCalls {
  constructor(
    private readonly models: ModelProviders,
    private readonly recorder: ModelCallRecorder,
    private readonly window: ContextWindow,
    private readonly files: FileStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly recorded: RecordedRuns,
    private readonly accounting: RunAccounting,
  ) {}

  /**
   * Sends the run's next model call: the conversation the model gets (ContextWindow made room for
   * it), the session's tools (none allowed on the last call the cap leaves, so the person still
   * gets an answer).
   */
  send(r: ModelCallSource, signal: AbortSignal, maxOutputTokens?: number): SentModelCall {
    const tools = r.toolset.definitions;
    const lastCall = r.run.iterations + 1 >= r.run.maxIterations;
    const messages = modelMessages(r.conversation, this.window.toolResultMaxChars(r.run.model), (id) =>
      this.files.readFile(id),
    );
    const request: ModelRequest = {
      model: r.run.model,
      // A model known to take no images or PDFs gets a note for each one the conversation holds.
      messages: registryTakesImages(r.run.model) === false ? withoutVisualFiles(messages) : messages,
      tools,
      toolChoice: tools.length > 0 && lastCall ? 'none' : undefined,
      reasoning: r.session.reasoning ?? this.config.llm.reasoning,
      maxOutputTokens: maxOutputTokens ?? this.config.llm.maxOutputTokens,
    };
    const format = r.run.responseFormat;
    if (format) {
      request.responseFormat = { name: format.name ?? DEFAULT_RESPONSE_FORMAT_NAME, schema: format.schema };
    }
    // A replay's recorded step is answered from the record; otherwise ModelProviders picks the
    // provider (or a fallback) and holds the call to its limits.
    const provider = this.recorded.model(r.run, r.run.iterations + 1) ?? this.models;
    return new SentModelCall(provider, request, signal);
  }

  /**
   * Whether a model call may be sent ahead of the loop (a run's first while its start commits,
   * CallsAhead): when it surely fits under COMPACT_AT as it is. Otherwise the loop sends the call
   * itself once ContextWindow.fit has made room — compaction needs a model call and a commit of its
   * own, which only the loop makes.
   */
  fitsAhead(r: ModelCallSource): boolean {
    return this.window.fitsAsIs({ model: r.run.model, rows: r.conversation, tools: r.toolset.definitions });
  }

  /**
   * Makes room for the loop's next model call (ContextWindow.fit), before it is sent; true when
   * that took a model call of its own (a summary), which the limits must then see. A replay's
   * recorded step needs none: its answer is read from the record, and a summary would be a model call.
   */
  async makeRoom(h: RunHandle): Promise<boolean> {
    if (this.recorded.model(h.run, h.run.iterations + 1) !== undefined) return false;
    return this.window.fit(h);
  }

  /** The tokens of a run's next request as it stands (an upper bound of the prompt: RequestTokens). */
  promptTokens(r: ModelCallSource): Promise<number> {
    return this.window.requestTokens(r);
  }

  /**
   * Reads the run's model call `sent` (asking for at most `maxOutputTokens`, as reserved) to its end,
   * streaming its text. A call the upstream refuses as longer than the window is sent once more
   * after compacting as far as the rules allow.
   */
  async read(h: RunHandle, sent: SentModelCall, maxOutputTokens?: number): Promise<ModelTurn> {
    let call = sent;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.readToEnd(h, call);
      } catch (err) {
        // Only a call refused before it streamed anything (so not counted) is sent again.
        if (!isContextTooLong(err) || h.unstoredCall !== null) throw err;
        if (attempt > 1)
          throw new ContextTooLong(
            `The model refused the request as too long after compaction: ${(err as Error).message}`,
          );
        // The refused call used nothing: what it held is given back before a summary reserves its
        // own, and the call is reserved again for what it is now.
        if (maxOutputTokens !== undefined) await this.accounting.giveBack(h);
        await this.window.fit(h, true);
        if (maxOutputTokens !== undefined) {
          maxOutputTokens = await this.accounting.reserve(h, await this.promptTokens(h));
        }
        call = this.send(h, h.signal, maxOutputTokens);
      }
    }
  }

  private async readToEnd(h: RunHandle, stream: SentModelCall): Promise<ModelTurn> {
    h.streamingText = '';
    let reasoning = '';
    // Tool-call arguments as streamed: with the text, what a call that never finished is counted from.
    let argumentsStreamed = '';
    // A silent upstream is the provider's to time out (LLM_IDLE_TIMEOUT_MS): it throws UPSTREAM_TIMEOUT.
    let firstTokenMs: number | null = null;
    const ended = (): EndedCall => ({
      of: { runId: h.run.id, sessionId: h.run.sessionId, owner: h.run.owner, endUser: h.run.endUser },
      iteration: h.run.iterations + 1,
      request: stream.request,
      streamed: h.streamingText + reasoning + argumentsStreamed,
      reported: null,
      sentAt: stream.sentAt,
      firstTokenMs,
      trace: h.trace,
    });
    try {
      for await (const event of stream) {
        firstTokenMs ??= performance.now() - stream.sentAt;
        switch (event.type) {
          case 'text':
            h.streamingText += event.delta;
            h.sink.emit({ type: 'text', delta: event.delta });
            break;
          case 'tool_call_delta':
            if (event.argumentsDelta) argumentsStreamed += event.argumentsDelta;
            break;
          case 'reasoning':
            reasoning += event.delta;
            h.sink.emit({ type: 'reasoning', delta: event.delta });
            break;
          case 'finish': {
            const text = h.streamingText;
            const recorded = await this.recorder.record({
              ...ended(),
              reported: event.usage,
              answeredBy: event.model,
              finishReason: event.finishReason,
              responseId: event.responseId,
              server: event.server,
              output: () => ({ text, reasoning, toolCalls: event.toolCalls }),
            });
            const turn = finishedTurn(text, event, reasoning, recorded);
            // A replayed step's answer came from the record: it spends nothing (step-record.ts).
            if (this.recorded.model(h.run, h.run.iterations + 1) !== undefined) turn.replayed = true;
            return turn;
          }
        }
      }
      throw new ModelError('UPSTREAM_CONNECTION', 'The model stream ended without finishing.', true);
    } catch (err) {
      // A replayed call the original never made (it ended before) counts nothing.
      if (err instanceof RecordedFailure && !err.called) throw err;
      // A call cancelled, or failed after it streamed, counts all the same: the run stores it as it ends.
      h.unstoredCall = await this.recorder.record({
        ...ended(),
        failure: err instanceof ModelError ? err.code : h.signal.aborted ? 'aborted' : 'internal',
      });
      throw err;
    }
  }
}

/** The model's answer as the step takes it, with its call as recorded (the usage row its step stores). */
function finishedTurn(
  text: string,
  finish: Extract<ModelStreamEvent, { type: 'finish' }>,
  reasoning: string,
  recorded: RecordedCall,
): ModelTurn {
  return {
    text,
    finishReason: finish.finishReason,
    usage: recorded.usage,
    toolCalls: finish.toolCalls,
    reasoning,
    providerData: finish.providerData,
    model: finish.model,
    modelCall: recorded.row,
  };
}
