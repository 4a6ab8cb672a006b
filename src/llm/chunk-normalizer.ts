import { jsonValueNestingExceeds, stringifyJson } from '../common/json-depth';
import { makeJsonStorable } from '../common/storable-text';
import type { ModelStreamEvent, Usage } from './model-provider';
import { ModelStreamWriter, type ModelStreamWriterOptions } from './model-stream-writer';
import { readAnthropicEvent } from './providers/anthropic/anthropic-events';
import type { StreamReading } from './stream-reading';
import type { WireChoice, WireChunk, WireDelta, WireFunction, WireToolCall, WireUsage } from './wire-chunk';
import { isObject, nonEmpty, responseIdOf } from './wire-values';

/** All the writer's (recovery, reserved ids, limits): how a chunk is read never depends on them. */
export type ChunkNormalizerOptions = ModelStreamWriterOptions;

/**
 * Turns the JSON objects of one upstream stream, in order, into ModelStreamEvents. Speaks OpenAI
 * Chat Completions chunks in every dialect recorded in shared/fixtures/upstream; Anthropic Messages
 * events are read by the anthropic provider's dialect (providers/anthropic/anthropic-events.ts)
 * through a StreamReading of this call. Reasoning never becomes text; tool calls are only complete in the finish event.
 * One instance per model call; `push` appends to a caller-owned array so the hot path allocates
 * nothing but the events themselves.
 *
 * This class knows the Chat Completions wire — which field of which dialect holds text, reasoning, a tool-call
 * fragment, the finish reason, the usage — and keeps what the upstream said about its end. What
 * becomes of each piece (storable text, the call's limits, the finish's tool calls) is the
 * ModelStreamWriter's, so a new dialect is read (in its provider's folder, through a
 * StreamReading) without touching the limits.
 */
export class ChunkNormalizer {
  private finishReason: string | null = null;
  /** What the upstream reported; the cache and reasoning counts only where it reports them. */
  private readonly usage: Usage = { promptTokens: 0, completionTokens: 0 };
  private responseId: string | undefined;
  private readonly writer: ModelStreamWriter;
  /** What another dialect's reader (providers/<name>/) may do to this call. */
  private readonly reading: StreamReading;

  constructor(options: ChunkNormalizerOptions = {}) {
    this.writer = new ModelStreamWriter(options);
    this.reading = {
      writer: this.writer,
      usage: this.usage,
      responseId: (value) => {
        this.responseId ??= responseIdOf(value);
      },
      finishWith: (reason) => {
        this.finishReason = reason;
      },
      finishIfUnset: () => {
        this.finishReason ??= 'stop';
      },
    };
  }

  /** Whether the upstream said it was done (a finish_reason, an Anthropic stop_reason or message_stop). */
  get finished(): boolean {
    return this.finishReason !== null;
  }

  /** Whether a limit was crossed: the caller should stop reading and end the stream. */
  get cut(): boolean {
    return this.writer.cut;
  }

  /**
   * Counts opaque state a provider reads outside these chunks (the Responses API's reasoning items)
   * against the call's one bound for it: false when it does not fit — the call is then cut.
   */
  providerData(chars: number): boolean {
    return this.writer.providerData(chars);
  }

  push(chunk: unknown, out: ModelStreamEvent[]): void {
    if (typeof chunk !== 'object' || chunk === null || this.writer.cut) return;
    const c = chunk as WireChunk;
    this.responseId ??= responseIdOf(c.id);
    const choices = c.choices;
    if (Array.isArray(choices)) {
      // Never choices[0] blindly: usage chunks and Azure's placeholder chunk have none.
      for (let i = 0; i < choices.length; i++) this.choice(choices[i], out);
    } else if (typeof c.type === 'string') {
      // Anthropic Messages events: the anthropic provider's, and a gateway's that passes them on.
      readAnthropicEvent(c.type, c, this.reading, out);
      return;
    }
    // Cumulative on every chunk for some servers (vLLM), so the last one seen wins; Groq may only have x_groq.usage.
    const usage = c.usage ?? (isObject(c.x_groq) ? (c.x_groq as { usage?: unknown }).usage : undefined);
    if (isObject(usage)) this.openAiUsage(usage);
  }

  /** Ends the stream: flushes text held back (a lone high surrogate, recovery) and appends the finish event. */
  end(out: ModelStreamEvent[]): void {
    this.writer.end(out, this.finishReason ?? 'stop', { ...this.usage });
    const finish = out[out.length - 1];
    if (finish?.type === 'finish' && this.responseId !== undefined) finish.responseId = this.responseId;
  }

  private choice(value: unknown, out: ModelStreamEvent[]): void {
    if (!isObject(value)) return;
    const choice = value as WireChoice;
    const delta = choice.delta;
    if (isObject(delta)) {
      const d = delta as WireDelta;
      const reasoning = nonEmpty(d.reasoning_content) ?? nonEmpty(d.reasoning);
      if (reasoning !== undefined) this.writer.reasoning(reasoning, out);
      const content = d.content;
      if (typeof content === 'string') {
        if (content !== '') this.writer.text(content, out);
      } else if (Array.isArray(content)) {
        this.contentParts(content, out);
      }
      const refusal = d.refusal;
      if (typeof refusal === 'string' && refusal !== '') this.writer.text(refusal, out);
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
    this.writer.toolCallDelta(index, id, name, args, opaqueProviderData(call.extra_content), out);
  }

  /** Content as a list of parts (Mistral's reasoning models): thinking parts are reasoning, text parts are text. */
  private contentParts(parts: unknown[], out: ModelStreamEvent[]): void {
    for (const part of parts) {
      if (!isObject(part)) continue;
      const { type, text, thinking } = part as { type?: unknown; text?: unknown; thinking?: unknown };
      if (type === 'text' && typeof text === 'string' && text !== '') {
        this.writer.text(text, out);
      } else if (type === 'thinking') {
        const reasoning =
          typeof thinking === 'string' ? thinking : Array.isArray(thinking) ? joinTexts(thinking) : '';
        if (reasoning !== '') this.writer.reasoning(reasoning, out);
      }
    }
  }

  /** Chat Completions: cached prompt tokens and reasoning tokens ride in the `*_details` objects. */
  private openAiUsage(usage: WireUsage): void {
    if (typeof usage.prompt_tokens === 'number') this.usage.promptTokens = usage.prompt_tokens;
    if (typeof usage.completion_tokens === 'number') this.usage.completionTokens = usage.completion_tokens;
    const cached = detail(usage.prompt_tokens_details, 'cached_tokens');
    if (cached !== undefined) this.usage.cacheReadTokens = cached;
    const reasoning = detail(usage.completion_tokens_details, 'reasoning_tokens');
    if (reasoning !== undefined) this.usage.reasoningTokens = reasoning;
  }
}

/** A count inside a usage `*_details` object, when the upstream sent one. */
function detail(details: unknown, key: string): number | undefined {
  if (!isObject(details)) return undefined;
  const value = (details as Record<string, unknown>)[key];
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * Provider data that must go back with a call (Gemini's thought signature): kept when it is JSON we
 * can store and send back — not nested beyond JSON_MAX_DEPTH, its strings made storable.
 */
function opaqueProviderData(value: unknown): Record<string, unknown> | undefined {
  if (!isObject(value) || Array.isArray(value) || jsonValueNestingExceeds(value)) return undefined;
  return makeJsonStorable(value as Record<string, unknown>);
}

function joinTexts(parts: unknown[]): string {
  let text = '';
  for (const part of parts) {
    const t = isObject(part) ? (part as { text?: unknown }).text : undefined;
    if (typeof t === 'string') text += t;
  }
  return text;
}
