import { jsonValueNestingExceeds, stringifyJson } from '../common/json-depth';
import { makeJsonStorable, StorableTextStream } from '../common/storable-text';
import type { ModelStreamEvent } from './model-provider';
import { STREAM_LIMITS, StreamBudget } from './stream-budget';
import { ToolCallAccumulator } from './tool-call-accumulator';
import { ToolCallTextRecovery, type RecoveredToolCall } from './tool-call-text-recovery';
import type {
  WireBlockDelta,
  WireChoice,
  WireChunk,
  WireContentBlock,
  WireDelta,
  WireFunction,
  WireToolCall,
  WireUsage,
} from './wire-chunk';

export interface ChunkNormalizerOptions {
  /** Recover `<tool_call>{…}</tool_call>` blocks written into text (config.toolCallTextRecovery). */
  recoverToolCallsFromText?: boolean;
  /** Tool-call ids already used in the conversation: an upstream that reuses one gets a fresh id. */
  reservedToolCallIds?: ReadonlySet<string>;
  /** ANSWER_MAX_BYTES: UTF-8 bytes of text this call may yield before it is cut (default: no cap). */
  answerMaxBytes?: number;
  /** Override STREAM_LIMITS (tests). */
  toolArgumentsMaxChars?: number;
  reasoningMaxChars?: number;
}

/**
 * Turns the JSON objects of one upstream stream, in order, into ModelStreamEvents. Speaks OpenAI
 * Chat Completions chunks in every dialect recorded in shared/fixtures/upstream, and Anthropic
 * Messages events. Reasoning never becomes text; tool calls are only complete in the finish event.
 * One instance per model call; `push` appends to a caller-owned array so the hot path allocates
 * nothing but the events themselves.
 *
 * What it yields is storable text (U+0000 and unpaired surrogates become U+FFFD, judged across
 * deltas), and it holds one call to its budget: once the answer, the arguments or the reasoning cross
 * their limit, it is `cut` — the caller stops reading — and the finish says `length`. An answer or
 * reasoning cut short finishes with no tool calls (a cut answer's calls cannot be trusted to be
 * whole); arguments cut short finish with the calls so far, the one that crossed the limit refused
 * (ModelToolCall.argumentsRefused), so the model hears why.
 */
export class ChunkNormalizer {
  private finishReason: string | null = null;
  private promptTokens = 0;
  private completionTokens = 0;
  private readonly toolCalls: ToolCallAccumulator;
  private readonly recovery: ToolCallTextRecovery | undefined;
  private readonly budget: StreamBudget;
  private readonly textStream = new StorableTextStream();
  private readonly reasoningStream = new StorableTextStream();
  private readonly argumentsMaxChars: number;
  /** Whether a call's arguments crossed the limit (the call is kept, refused). */
  private argumentsRefused = false;
  /** Where recovered calls go: the array of the push (or end) in progress. */
  private out: ModelStreamEvent[] = [];

  constructor(options: ChunkNormalizerOptions = {}) {
    this.toolCalls = new ToolCallAccumulator(options.reservedToolCallIds);
    this.recovery = options.recoverToolCallsFromText
      ? new ToolCallTextRecovery((call) => this.recovered(call))
      : undefined;
    this.argumentsMaxChars = options.toolArgumentsMaxChars ?? STREAM_LIMITS.toolArgumentsMaxChars;
    this.budget = new StreamBudget({
      answerMaxBytes: options.answerMaxBytes ?? Number.POSITIVE_INFINITY,
      toolArgumentsMaxChars: this.argumentsMaxChars,
      reasoningMaxChars: options.reasoningMaxChars ?? STREAM_LIMITS.reasoningMaxChars,
    });
  }

  /** Whether the upstream said it was done (a finish_reason, an Anthropic stop_reason or message_stop). */
  get finished(): boolean {
    return this.finishReason !== null;
  }

  /** Whether a limit was crossed: the caller should stop reading and end the stream. */
  get cut(): boolean {
    return this.budget.cut;
  }

  push(chunk: unknown, out: ModelStreamEvent[]): void {
    if (typeof chunk !== 'object' || chunk === null || this.budget.cut) return;
    this.out = out;
    const c = chunk as WireChunk;
    const choices = c.choices;
    if (Array.isArray(choices)) {
      // Never choices[0] blindly: usage chunks and Azure's placeholder chunk have none.
      for (let i = 0; i < choices.length; i++) this.choice(choices[i], out);
    } else if (typeof c.type === 'string') {
      this.anthropicEvent(c.type, c, out);
      return;
    }
    // Cumulative on every chunk for some servers (vLLM), so the last one seen wins; Groq may only have x_groq.usage.
    const usage = c.usage ?? (isObject(c.x_groq) ? (c.x_groq as { usage?: unknown }).usage : undefined);
    if (isObject(usage)) this.openAiUsage(usage);
  }

  /** Ends the stream: flushes text held back (a lone high surrogate, recovery) and appends the finish event. */
  end(out: ModelStreamEvent[]): void {
    this.out = out;
    if (!this.budget.cut) {
      const reasoning = this.reasoningStream.flush();
      if (reasoning !== '') out.push({ type: 'reasoning', delta: reasoning });
      const text = this.textStream.flush();
      if (text !== '') this.recoverAndEmit(text, out);
      if (this.recovery !== undefined && !this.budget.cut) {
        const rest = this.recovery.flush();
        if (rest !== '') this.emitText(rest, out);
      }
    }
    const cut = this.budget.cut;
    out.push({
      type: 'finish',
      finishReason: cut ? 'length' : (this.finishReason ?? 'stop'),
      usage: { promptTokens: this.promptTokens, completionTokens: this.completionTokens },
      // Cut by the arguments: the calls so far, the one that crossed refused. Cut by text or
      // reasoning: none (a call streamed before an answer cut short is not acted on).
      toolCalls: !cut || this.argumentsRefused ? this.toolCalls.finish() : [],
    });
  }

  private choice(value: unknown, out: ModelStreamEvent[]): void {
    if (!isObject(value)) return;
    const choice = value as WireChoice;
    const delta = choice.delta;
    if (isObject(delta)) {
      const d = delta as WireDelta;
      const reasoning = nonEmpty(d.reasoning_content) ?? nonEmpty(d.reasoning);
      if (reasoning !== undefined) this.reasoning(reasoning, out);
      const content = d.content;
      if (typeof content === 'string') {
        if (content !== '') this.text(content, out);
      } else if (Array.isArray(content)) {
        this.contentParts(content, out);
      }
      const refusal = d.refusal;
      if (typeof refusal === 'string' && refusal !== '') this.text(refusal, out);
      const calls = d.tool_calls;
      if (Array.isArray(calls)) {
        for (let i = 0; i < calls.length; i++) this.toolCallDelta(calls[i], out);
      }
    }
    const reason = choice.finish_reason;
    if (typeof reason === 'string' && reason !== '') this.finishReason = reason;
  }

  private toolCallDelta(value: unknown, out: ModelStreamEvent[]): void {
    if (!isObject(value)) return;
    const call = value as WireToolCall;
    const fn = isObject(call.function) ? (call.function as WireFunction) : undefined;
    let args: string | undefined;
    let name: string | undefined;
    let id = nonEmpty(call.id);
    if (fn !== undefined) {
      name = nonEmpty(fn.name);
      id ??= nonEmpty(fn.id);
      const raw = fn.arguments;
      // Non-standard but seen (native Ollama through proxies, Venice): arguments as an object.
      args = typeof raw === 'string' ? raw : isObject(raw) ? stringifyJson(raw) : undefined;
    }
    const index = typeof call.index === 'number' ? call.index : undefined;
    const extra = opaqueProviderData(call.extra_content);
    if (args !== undefined && !this.budget.arguments(args.length)) {
      // The call is known (it may be this fragment that opens it), its arguments are not kept.
      this.toolCalls.delta(index, id, name, undefined, extra);
      this.refuseArguments(undefined);
      return;
    }
    const event = this.toolCalls.delta(index, id, name, args, extra);
    if (event !== undefined) out.push(event);
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

  /** Content as a list of parts (Mistral's reasoning models): thinking parts are reasoning, text parts are text. */
  private contentParts(parts: unknown[], out: ModelStreamEvent[]): void {
    for (const part of parts) {
      if (!isObject(part)) continue;
      const { type, text, thinking } = part as { type?: unknown; text?: unknown; thinking?: unknown };
      if (type === 'text' && typeof text === 'string' && text !== '') {
        this.text(text, out);
      } else if (type === 'thinking') {
        const reasoning =
          typeof thinking === 'string' ? thinking : Array.isArray(thinking) ? joinTexts(thinking) : '';
        if (reasoning !== '') this.reasoning(reasoning, out);
      }
    }
  }

  private anthropicEvent(type: string, c: WireChunk, out: ModelStreamEvent[]): void {
    switch (type) {
      case 'message_start': {
        const usage = isObject(c.message) ? (c.message as { usage?: unknown }).usage : undefined;
        if (isObject(usage)) this.anthropicUsage(usage);
        return;
      }
      case 'content_block_start': {
        if (!isObject(c.content_block)) return;
        const block = c.content_block as WireContentBlock;
        if (block.type === 'tool_use') {
          // `input` is `{}` when the arguments stream as input_json_delta; a gateway might put them all here instead.
          const preset =
            isObject(block.input) && hasKeys(block.input) ? stringifyJson(block.input) : undefined;
          if (preset !== undefined && !this.budget.arguments(preset.length)) {
            this.toolCalls.start(blockIndex(c), nonEmpty(block.id), nonEmpty(block.name));
            this.refuseArguments(blockIndex(c));
            return;
          }
          out.push(this.toolCalls.start(blockIndex(c), nonEmpty(block.id), nonEmpty(block.name), preset));
        } else if (block.type === 'text') {
          const text = nonEmpty(block.text);
          if (text !== undefined) this.text(text, out);
        } else if (block.type === 'thinking') {
          const thinking = nonEmpty(block.thinking);
          if (thinking !== undefined) this.reasoning(thinking, out);
        }
        return;
      }
      case 'content_block_delta': {
        if (!isObject(c.delta)) return;
        const delta = c.delta as WireBlockDelta;
        if (delta.type === 'text_delta') {
          const text = nonEmpty(delta.text);
          if (text !== undefined) this.text(text, out);
        } else if (delta.type === 'input_json_delta') {
          if (typeof delta.partial_json !== 'string') return;
          if (!this.budget.arguments(delta.partial_json.length)) {
            this.refuseArguments(blockIndex(c));
            return;
          }
          const event = this.toolCalls.append(blockIndex(c), delta.partial_json);
          if (event !== undefined) out.push(event);
        } else if (delta.type === 'thinking_delta') {
          const thinking = nonEmpty(delta.thinking);
          if (thinking !== undefined) this.reasoning(thinking, out);
        }
        return;
      }
      case 'message_delta': {
        if (isObject(c.delta)) {
          const reason = nonEmpty((c.delta as WireBlockDelta).stop_reason);
          if (reason !== undefined) this.finishReason = reason;
        }
        if (isObject(c.usage)) this.anthropicUsage(c.usage);
        return;
      }
      case 'message_stop':
        // A clean end even if no stop_reason came.
        this.finishReason ??= 'stop';
        return;
      default:
        // ping, content_block_stop, and event types added after this was written.
        return;
    }
  }

  private text(delta: string, out: ModelStreamEvent[]): void {
    const storable = this.textStream.push(delta);
    if (storable !== '') this.recoverAndEmit(storable, out);
  }

  private recoverAndEmit(text: string, out: ModelStreamEvent[]): void {
    if (this.recovery !== undefined) {
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

  private reasoning(delta: string, out: ModelStreamEvent[]): void {
    if (!this.budget.reasoning(delta.length)) return;
    const storable = this.reasoningStream.push(delta);
    if (storable !== '') out.push({ type: 'reasoning', delta: storable });
  }

  private recovered(call: RecoveredToolCall): void {
    this.out.push(this.toolCalls.add(call.name, call.arguments));
  }

  private openAiUsage(usage: WireUsage): void {
    if (typeof usage.prompt_tokens === 'number') this.promptTokens = usage.prompt_tokens;
    if (typeof usage.completion_tokens === 'number') this.completionTokens = usage.completion_tokens;
  }

  /** Input (with cached input) comes in message_start and may be repeated in message_delta; output is cumulative in message_delta. */
  private anthropicUsage(usage: WireUsage): void {
    if (typeof usage.input_tokens === 'number') {
      this.promptTokens =
        usage.input_tokens + count(usage.cache_creation_input_tokens) + count(usage.cache_read_input_tokens);
    }
    if (typeof usage.output_tokens === 'number') this.completionTokens = usage.output_tokens;
  }
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function count(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

function blockIndex(c: WireChunk): number {
  return typeof c.index === 'number' ? c.index : -1;
}

/**
 * Provider data that must go back with a call (Gemini's thought signature): kept when it is JSON we
 * can store and send back — not nested beyond JSON_MAX_DEPTH, its strings made storable.
 */
function opaqueProviderData(value: unknown): Record<string, unknown> | undefined {
  if (!isObject(value) || Array.isArray(value) || jsonValueNestingExceeds(value)) return undefined;
  return makeJsonStorable(value as Record<string, unknown>);
}

function hasKeys(value: object): boolean {
  for (const _key in value) return true;
  return false;
}

function joinTexts(parts: unknown[]): string {
  let text = '';
  for (const part of parts) {
    const t = isObject(part) ? (part as { text?: unknown }).text : undefined;
    if (typeof t === 'string') text += t;
  }
  return text;
}
