/**
 * What one model call may make the server hold. Text is capped by ANSWER_MAX_BYTES (config); these
 * bound the rest, so an upstream that never stops costs bounded memory and time. Crossing any of them
 * ends the call as if the model had hit its own limit: `finishReason` `length` (the tool call whose
 * arguments crossed theirs is kept and refused: ModelStreamWriter).
 */
export const STREAM_LIMITS = {
  /** All tool-call arguments of one model call together (and `<tool_call>` blocks held in text), in UTF-16 code units. */
  toolArgumentsMaxChars: 4 * 1024 * 1024,
  /** Reasoning of one model call, in UTF-16 code units (streamed to no one, but read and decoded). */
  reasoningMaxChars: 4 * 1024 * 1024,
  /**
   * Opaque state of one model call that is stored and sent back on the next (Anthropic's thinking
   * signatures and redacted_thinking data, the Responses API's reasoning items as sent), in UTF-16
   * code units — as much as its reasoning may hold, since that is what the state encodes. Real ones
   * are a few KB to some hundred KB; crossing it cuts the call like reasoning does, and the provider
   * keeps none of that state.
   */
  providerDataMaxChars: 4 * 1024 * 1024,
} as const;

export interface StreamBudgetLimits {
  answerMaxBytes: number;
  toolArgumentsMaxChars: number;
  reasoningMaxChars: number;
  providerDataMaxChars: number;
}

/** Counts one model call against its limits; once one is crossed the call is cut and stays cut. */
export class StreamBudget {
  private answerBytesLeft: number;
  private argumentCharsLeft: number;
  private reasoningCharsLeft: number;
  private providerDataCharsLeft: number;
  private exhausted = false;

  constructor(limits: StreamBudgetLimits) {
    this.answerBytesLeft = limits.answerMaxBytes;
    this.argumentCharsLeft = limits.toolArgumentsMaxChars;
    this.reasoningCharsLeft = limits.reasoningMaxChars;
    this.providerDataCharsLeft = limits.providerDataMaxChars;
  }

  /** Whether a limit was crossed: nothing more is taken from this call. */
  get cut(): boolean {
    return this.exhausted;
  }

  /** The part of a text delta that fits: all of it, or the longest prefix that does (then the call is cut). */
  text(delta: string): string {
    if (this.exhausted) return '';
    // Most deltas are ASCII and far from the cap: one native count, no copy.
    const bytes = Buffer.byteLength(delta, 'utf8');
    if (bytes <= this.answerBytesLeft) {
      this.answerBytesLeft -= bytes;
      return delta;
    }
    const head = utf8Prefix(delta, this.answerBytesLeft);
    this.answerBytesLeft = 0;
    this.exhausted = true;
    return head;
  }

  /** Whether `chars` more argument text fits; when not, the call is cut. */
  arguments(chars: number): boolean {
    return this.take(chars, 'argumentCharsLeft');
  }

  /** Whether `chars` more reasoning fits; when not, the call is cut. */
  reasoning(chars: number): boolean {
    return this.take(chars, 'reasoningCharsLeft');
  }

  /** Whether `chars` more opaque provider state fits; when not, the call is cut. */
  providerData(chars: number): boolean {
    return this.take(chars, 'providerDataCharsLeft');
  }

  /** Whether text held back, not yet shown (a `<tool_call>` block), is still within the arguments limit. */
  holds(chars: number): boolean {
    if (this.exhausted) return false;
    if (chars > this.argumentCharsLeft) this.exhausted = true;
    return !this.exhausted;
  }

  private take(
    chars: number,
    left: 'argumentCharsLeft' | 'reasoningCharsLeft' | 'providerDataCharsLeft',
  ): boolean {
    if (this.exhausted) return false;
    if (chars > this[left]) {
      this.exhausted = true;
      return false;
    }
    this[left] -= chars;
    return true;
  }
}

/** The longest prefix of `text` that is at most `maxBytes` in UTF-8 and does not split a character. */
export function utf8Prefix(text: string, maxBytes: number): string {
  let bytes = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    let size = 1;
    let units = 1;
    if (c >= 0x80) {
      if (c < 0x800) {
        size = 2;
      } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        const next = text.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          size = 4;
          units = 2;
        } else {
          size = 3;
        }
      } else {
        size = 3;
      }
    }
    if (bytes + size > maxBytes) break;
    bytes += size;
    i += units;
  }
  return text.slice(0, i);
}
