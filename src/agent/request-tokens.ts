import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ModelToolDefinition } from '../llm/model-provider';
import { splitModelName } from '../llm/model-name';
import type { MessageRow } from '../store/conversation-store.service';
import { toModelMessage, toolNames } from './conversation';
import {
  messageChars,
  messageTokensBound,
  rawMessageTokens,
  rawMessageTokensYielding,
  rawToolTokens,
  REQUEST_TOKENS,
  tokenizerFor,
  type Tokenizer,
} from './token-count';

/** What a model call is counted from: the session's stored rows in order, the model and the tools offered. */
export interface CallShape {
  model: string;
  rows: readonly MessageRow[];
  tools: readonly ModelToolDefinition[];
}

/** Messages counted and remembered per process (by id and encoding; a stored message never changes). */
const COUNTS_REMEMBERED = 100_000;
/** New text the synchronous check may count before it leaves the call to the loop's own path. */
const AHEAD_COUNT_CHARS = 64 * 1024;
/** Text counted between two yields to the event loop (a few milliseconds' work). */
const YIELD_CHARS = 128 * 1024;

/**
 * A request's tokens as the model counts them (token-count.ts), from the session's stored rows:
 * each message counted once per process and remembered by its id (a stored message never changes),
 * long text counted a piece a turn of the event loop.
 */
export class RequestTokens {
  private readonly counts = new Map<string, number>();

  /** `toolResultMaxChars`: where the model's tool results are cut (conversation.ts cutToolResult). */
  constructor(private readonly toolResultMaxChars: (model: string) => number = () => Infinity) {}

  tokenizerOf(model: string): Tokenizer {
    const { provider, model: own } = splitModelName(model);
    return tokenizerFor(provider, own);
  }

  /**
   * Whether the request is surely at most `limit` tokens without counting anything new: messages
   * counted before by their count, the others by a bound no tokenization can exceed
   * (messageTokensBound). Most requests are far below their window, and this is how they skip the
   * tokenizer (1.4 ms of CPU per call at c=16 in `node bench/long-session.mjs`).
   */
  atMost(call: CallShape, limit: number): boolean {
    const tk = this.tokenizerOf(call.model);
    const names = toolNames(call.rows);
    const cut = this.toolResultMaxChars(call.model);
    let raw = REQUEST_TOKENS + rawToolTokens(call.tools, tk.encoding);
    for (const m of call.rows) {
      if (m.context === 'summarized') continue;
      raw += this.counts.get(keyOf(m, tk, cut)) ?? messageTokensBound(toModelMessage(m, names, cut));
      if (Math.ceil(raw * tk.factor) > limit) return false;
    }
    return true;
  }

  /** Whether the request is at most `limit` tokens, known now: counting at most AHEAD_COUNT_CHARS of new text. */
  withinNow(call: CallShape, limit: number): boolean {
    if (this.atMost(call, limit)) return true;
    const tally = this.tally(call, AHEAD_COUNT_CHARS);
    return 'total' in tally && tally.total <= limit;
  }

  /**
   * The tokens of the request `call` makes. Long text is counted a piece a turn of the event loop
   * (YIELD_CHARS), a message longer than that too, so no request blocks the loop however large.
   */
  async count(call: CallShape): Promise<number> {
    const tk = this.tokenizerOf(call.model);
    const names = toolNames(call.rows);
    const cut = this.toolResultMaxChars(call.model);
    for (;;) {
      const tally = this.tally(call, YIELD_CHARS);
      if ('total' in tally) return tally.total;
      const message = toModelMessage(tally.next, names, cut);
      if (messageChars(message) > YIELD_CHARS) {
        const tokens = await rawMessageTokensYielding(message, tk.encoding, YIELD_CHARS, tk.images);
        this.remember(keyOf(tally.next, tk, cut), tokens);
      } else {
        await nextTurn();
      }
    }
  }

  /**
   * The request's tokens, counting at most `newChars` characters of messages not counted before;
   * else the first message that did not fit (what was counted is remembered, so a later call goes on
   * from there).
   */
  private tally(call: CallShape, newChars: number): { total: number } | { next: MessageRow } {
    const tk = this.tokenizerOf(call.model);
    const names = toolNames(call.rows);
    const cut = this.toolResultMaxChars(call.model);
    let raw = REQUEST_TOKENS + rawToolTokens(call.tools, tk.encoding);
    let budget = newChars;
    for (const m of call.rows) {
      if (m.context === 'summarized') continue;
      if (m.context === 'pruned') {
        raw += rawMessageTokens(toModelMessage(m, names), tk.encoding, tk.images);
        continue;
      }
      const key = keyOf(m, tk, cut);
      let n = this.counts.get(key);
      if (n === undefined) {
        const message = toModelMessage(m, names, cut);
        const chars = messageChars(message);
        if (chars > budget) return { next: m };
        budget -= chars;
        n = rawMessageTokens(message, tk.encoding, tk.images);
        this.remember(key, n);
      }
      raw += n;
    }
    return { total: Math.ceil(raw * tk.factor) };
  }

  /** A message's tokens as the model gets it (a pruned one as its stub), without the tokenizer's factor. */
  liveTokens(rows: readonly MessageRow[], model: string): (m: MessageRow) => number {
    const names = toolNames(rows);
    const tk = this.tokenizerOf(model);
    return (m) =>
      m.context === 'pruned'
        ? rawMessageTokens(toModelMessage(m, names), tk.encoding, tk.images)
        : this.rowTokens(m, model);
  }

  /** A stored message's tokens as the model gets it unpruned (cut if it is that long; without the tokenizer's factor). */
  rowTokens(m: MessageRow, model: string): number {
    const tk = this.tokenizerOf(model);
    const cut = this.toolResultMaxChars(model);
    const key = keyOf(m, tk, cut);
    let n = this.counts.get(key);
    if (n === undefined) {
      n = rawMessageTokens(toModelMessage({ ...m, context: null }, new Map(), cut), tk.encoding, tk.images);
      this.remember(key, n);
    }
    return n;
  }

  private remember(key: string, tokens: number): void {
    if (this.counts.size >= COUNTS_REMEMBERED) {
      // Forget the oldest tenth (a Map iterates in insertion order).
      let drop = COUNTS_REMEMBERED / 10;
      for (const k of this.counts.keys()) {
        this.counts.delete(k);
        if (--drop === 0) break;
      }
    }
    this.counts.set(key, tokens);
  }
}

/**
 * A message's count is remembered under its id and encoding, and a tool result that is cut also
 * under where it is cut (one cut per window): what is counted is always what would be sent.
 */
function keyOf(m: MessageRow, tk: Tokenizer, cut: number): string {
  return m.role === 'tool' && (m.content?.length ?? 0) > cut
    ? `${tk.encoding}|${m.id}|${cut}`
    : `${tk.encoding}|${m.id}`;
}
