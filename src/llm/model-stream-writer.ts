import { StorableTextStream } from '../common/storable-text';
import type { ModelStreamEvent, Usage } from './model-provider';
import { STREAM_LIMITS, StreamBudget } from './stream-budget';
import { ToolCallAccumulator } from './tool-call-accumulator';
import { ToolCallTextRecovery, type RecoveredToolCall } from './tool-call-text-recovery';

export interface ModelStreamWriterOptions {
  /** Recover `<tool_call>{…}</tool_call>` blocks written into text (config.toolCallTextRecovery). */
  recoverToolCallsFromText?: boolean;
  /** Tool-call ids already used in the conversation: an upstream that reuses one gets a fresh id. */
  reservedToolCallIds?: ReadonlySet<string>;
  /** ANSWER_MAX_BYTES: UTF-8 bytes of text this call may yield before it is cut (default: no cap). */
  answerMaxBytes?: number;
  /** Override STREAM_LIMITS (tests). */
  toolArgumentsMaxChars?: number;
  reasoningMaxChars?: number;
  providerDataMaxChars?: number;
}

/**
 * Writes one model call's ModelStreamEvents from what ChunkNormalizer read off the wire — text,
 * reasoning, tool-call fragments — and ends them with the finish. Whatever the dialect, everything
 * the server will hold of a call passes through here, so this is the one place where it is made
 * storable and held to the call's budget. One instance per model call, owned by its ChunkNormalizer.
 *
 * What it yields is storable text (U+0000 and unpaired surrogates become U+FFFD, judged across
 * deltas), and it holds one call to its budget: once the answer, the arguments or the reasoning cross
 * their limit, it is `cut` — the caller stops reading — and the finish says `length`. An answer or
 * reasoning cut short finishes with no tool calls (a cut answer's calls cannot be trusted to be
 * whole); arguments cut short finish with the calls so far, the one that crossed the limit refused
 * (ModelToolCall.argumentsRefused), so the model hears why.
 */
export class ModelStreamWriter {
  private readonly toolCalls: ToolCallAccumulator;
  private readonly recovery: ToolCallTextRecovery | undefined;
  private readonly budget: StreamBudget;
  private readonly textStream = new StorableTextStream();
  private readonly reasoningStream = new StorableTextStream();
  private readonly argumentsMaxChars: number;
  /** Whether a call's arguments crossed the limit (the call is kept, refused). */
  private argumentsRefused = false;
  /** Where recovered calls go: the array of the text (or end) being written; recovery calls back into it. */
  private out: ModelStreamEvent[] = [];

  constructor(options: ModelStreamWriterOptions = {}) {
    this.toolCalls = new ToolCallAccumulator(options.reservedToolCallIds);
    this.recovery = options.recoverToolCallsFromText
      ? new ToolCallTextRecovery((call) => this.recovered(call))
      : undefined;
    this.argumentsMaxChars = options.toolArgumentsMaxChars ?? STREAM_LIMITS.toolArgumentsMaxChars;
    this.budget = new StreamBudget({
      answerMaxBytes: options.answerMaxBytes ?? Number.POSITIVE_INFINITY,
      toolArgumentsMaxChars: this.argumentsMaxChars,
      reasoningMaxChars: options.reasoningMaxChars ?? STREAM_LIMITS.reasoningMaxChars,
      providerDataMaxChars: options.providerDataMaxChars ?? STREAM_LIMITS.providerDataMaxChars,
    });
  }

  /** Whether a limit was crossed: nothing more is written but the finish. */
  get cut(): boolean {
    return this.budget.cut;
  }

  text(delta: string, out: ModelStreamEvent[]): void {
    const storable = this.textStream.push(delta);
    if (storable !== '') this.recoverAndEmit(storable, out);
  }

  reasoning(delta: string, out: ModelStreamEvent[]): void {
    if (!this.budget.reasoning(delta.length)) return;
    const storable = this.reasoningStream.push(delta);
    if (storable !== '') out.push({ type: 'reasoning', delta: storable });
  }

  /**
   * Opaque state the provider keeps to send back (a signature, redacted thinking): counted, never
   * written. Past its limit the call is cut like reasoning (`length`, no tool calls): false, and the
   * provider keeps none of that call's state.
   */
  providerData(chars: number): boolean {
    return this.budget.providerData(chars);
  }

  /** One OpenAI-style fragment (see ToolCallAccumulator.delta); empty id and name come as undefined. */
  toolCallDelta(
    index: number | undefined,
    id: string | undefined,
    name: string | undefined,
    args: string | undefined,
    extraContent: Record<string, unknown> | undefined,
    out: ModelStreamEvent[],
  ): void {
    if (args !== undefined && !this.budget.arguments(args.length)) {
      // The call is known (it may be this fragment that opens it), its arguments are not kept.
      this.toolCalls.delta(index, id, name, undefined, extraContent);
      this.refuseArguments(undefined);
      return;
    }
    const event = this.toolCalls.delta(index, id, name, args, extraContent);
    if (event !== undefined) out.push(event);
  }

  /** A call known to be new under `key` (an Anthropic `tool_use` block), its arguments possibly whole already. */
  toolCallStart(
    key: number,
    id: string | undefined,
    name: string | undefined,
    presetArguments: string | undefined,
    out: ModelStreamEvent[],
  ): void {
    if (presetArguments !== undefined && !this.budget.arguments(presetArguments.length)) {
      this.toolCalls.start(key, id, name);
      this.refuseArguments(key);
      return;
    }
    out.push(this.toolCalls.start(key, id, name, presetArguments));
  }

  /** More arguments for the call started under `key` (an Anthropic `input_json_delta`). */
  toolCallArguments(key: number, args: string, out: ModelStreamEvent[]): void {
    if (!this.budget.arguments(args.length)) {
      this.refuseArguments(key);
      return;
    }
    const event = this.toolCalls.append(key, args);
    if (event !== undefined) out.push(event);
  }

  /**
   * Ends the call: flushes text held back (a lone high surrogate, recovery) and appends the finish,
   * with the upstream's reason and usage unless a limit cut the call.
   */
  end(out: ModelStreamEvent[], finishReason: string, usage: Usage): void {
    if (!this.budget.cut) {
      const reasoning = this.reasoningStream.flush();
      if (reasoning !== '') out.push({ type: 'reasoning', delta: reasoning });
      const text = this.textStream.flush();
      if (text !== '') this.recoverAndEmit(text, out);
      if (this.recovery !== undefined && !this.budget.cut) {
        this.out = out;
        const rest = this.recovery.flush();
        if (rest !== '') this.emitText(rest, out);
      }
    }
    const cut = this.budget.cut;
    out.push({
      type: 'finish',
      finishReason: cut ? 'length' : finishReason,
      usage,
      // Cut by the arguments: the calls so far, the one that crossed refused. Cut by text or
      // reasoning: none (a call streamed before an answer cut short is not acted on).
      toolCalls: !cut || this.argumentsRefused ? this.toolCalls.finish() : [],
    });
  }

  /**
   * The arguments of the call under `key` (the latest when undefined) crossed the limit: the call is
   * kept, refused, and the stream is cut (the budget already is) — so the step still answers it and
   * the run goes on, while nothing more of the upstream is read.
   */
  private refuseArguments(key: number | undefined): void {
    this.argumentsRefused = true;
    this.toolCalls.refuseArguments(
      key,
      `Not run: the arguments of this call passed ${this.argumentsMaxChars.toLocaleString('en-US')} characters, the most one ` +
        'model response may hold for all its tool calls together, so they were dropped. Send less in ' +
        'one call (e.g. write a large file in several smaller edits).',
    );
  }

  private recoverAndEmit(text: string, out: ModelStreamEvent[]): void {
    if (this.recovery !== undefined) {
      this.out = out;
      text = this.recovery.push(text);
      // A <tool_call> block is held until it closes: it counts against the arguments' limit.
      if (!this.budget.holds(this.recovery.heldChars)) return;
      if (text === '') return;
    }
    this.emitText(text, out);
  }

  private emitText(text: string, out: ModelStreamEvent[]): void {
    const shown = this.budget.text(text);
    if (shown !== '') out.push({ type: 'text', delta: shown });
  }

  private recovered(call: RecoveredToolCall): void {
    this.out.push(this.toolCalls.add(call.name, call.arguments));
  }
}
