import { stringifyJson } from '../common/json-depth';

export interface RecoveredToolCall {
  name: string;
  arguments: string;
}

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

/**
 * Recovers Hermes/Qwen-style `<tool_call>{"name":…,"arguments":{…}}</tool_call>` blocks that a model
 * writes into its text when the server runs without a tool parser. Text around the blocks streams on;
 * only what could be the start of a tag is held back until the next delta tells.
 */
export class ToolCallTextRecovery {
  private held = '';
  private block: string | null = null;

  constructor(private readonly onCall: (call: RecoveredToolCall) => void) {}

  /** How much text is held back now (an open block, or what may start a tag): the caller bounds it. */
  get heldChars(): number {
    return this.held.length + (this.block?.length ?? 0);
  }

  /** Feeds one text delta; returns the text that is safe to show now ('' when everything is held back). */
  push(delta: string): string {
    if (this.block === null && this.held === '' && !delta.includes('<')) return delta;
    let text: string;
    let scanFrom = 0;
    if (this.block !== null) {
      // Only the seam between what we had and the new delta can hold a closing tag we haven't looked at.
      scanFrom = Math.max(0, this.block.length - CLOSE.length + 1);
      text = this.block + delta;
    } else {
      text = this.held + delta;
    }
    this.held = '';
    let shown = '';
    for (;;) {
      if (this.block !== null) {
        const end = text.indexOf(CLOSE, scanFrom);
        if (end === -1) {
          this.block = text;
          return shown;
        }
        shown += this.settle(text.slice(0, end), true);
        this.block = null;
        text = text.slice(end + CLOSE.length);
        scanFrom = 0;
        continue;
      }
      const start = text.indexOf(OPEN);
      if (start !== -1) {
        shown += text.slice(0, start);
        text = text.slice(start + OPEN.length);
        this.block = '';
        continue;
      }
      const keep = partialOpenTagAt(text);
      this.held = text.slice(keep);
      return shown + text.slice(0, keep);
    }
  }

  /** End of the stream: returns what is still held. A block cut off before its closing tag is recovered when its JSON is whole (servers that use the tag as a stop sequence), else given back as text. */
  flush(): string {
    const held = this.held;
    this.held = '';
    if (this.block === null) return held;
    const body = this.block;
    this.block = null;
    return this.settle(body, false);
  }

  /** Turns a block body into a call; returns the text to show instead ('' when it was a call). */
  private settle(body: string, closed: boolean): string {
    const call = parseBlock(body);
    if (call === undefined) return OPEN + body + (closed ? CLOSE : '');
    this.onCall(call);
    return '';
  }
}

/** Where a trailing prefix of `<tool_call>` begins in `text`, or `text.length` when there is none. */
function partialOpenTagAt(text: string): number {
  let at = text.indexOf('<', Math.max(0, text.length - OPEN.length + 1));
  while (at !== -1) {
    if (OPEN.startsWith(text.slice(at))) return at;
    at = text.indexOf('<', at + 1);
  }
  return text.length;
}

function parseBlock(body: string): RecoveredToolCall | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const {
    name,
    arguments: args,
    parameters,
  } = value as { name?: unknown; arguments?: unknown; parameters?: unknown };
  if (typeof name !== 'string' || name === '') return undefined;
  const given = args !== undefined ? args : parameters;
  const text =
    typeof given === 'string' ? given : given === undefined || given === null ? '' : stringifyJson(given);
  return { name, arguments: text };
}
