import { randomUUID } from 'node:crypto';
import { toStorableText } from '../common/storable-text';
import type { ModelStreamEvent, ModelToolCall } from './model-provider';

export type ToolCallDeltaEvent = Extract<ModelStreamEvent, { type: 'tool_call_delta' }>;

interface PendingCall {
  /** The upstream's `index` (or Anthropic block index); -1 when it sent none. */
  readonly key: number;
  /** Where the call sits in the finished list: the order calls were first seen. */
  readonly position: number;
  id: string;
  /** The id the upstream used for this call ('' if none): continuations are matched on it, not on `id`. */
  wireId: string;
  name: string;
  arguments: string;
  /** Arguments that came whole with the call's start (Anthropic `input`); the first streamed fragment replaces them. */
  preset: boolean;
  /** Why its arguments were dropped (ModelToolCall.argumentsRefused). */
  refused: string | undefined;
  extraContent: Record<string, unknown> | undefined;
}

const NO_IDS: ReadonlySet<string> = new Set();

/**
 * Assembles streamed tool-call fragments into complete calls, whatever the upstream's dialect:
 * ids on the first fragment only, on every fragment, `""` or absent; `index` missing, starting at 1,
 * or reused for several calls that differ only by id. Ids are the upstream's when usable (see
 * isUsableToolCallId, and not seen before in this response or in `reservedIds`), otherwise generated.
 */
export class ToolCallAccumulator {
  private readonly calls: PendingCall[] = [];
  private readonly byKey = new Map<number, PendingCall>();
  private readonly usedIds = new Set<string>();
  private last: PendingCall | undefined;

  /** @param reservedIds ids already used in the conversation, so a reused upstream id gets replaced. */
  constructor(private readonly reservedIds: ReadonlySet<string> = NO_IDS) {}

  get size(): number {
    return this.calls.length;
  }

  /**
   * Applies one OpenAI-style fragment. Empty strings must be passed as `undefined` for id and name.
   * Returns what is new about the call, or undefined when nothing is (e.g. an empty trailing fragment).
   */
  delta(
    index: number | undefined,
    id: string | undefined,
    name: string | undefined,
    args: string | undefined,
    extraContent?: Record<string, unknown>,
  ): ToolCallDeltaEvent | undefined {
    let call = index === undefined ? this.last : this.last?.key === index ? this.last : this.byKey.get(index);
    let newId: string | undefined;
    if (call === undefined || startsNewCall(call, id, name, args)) {
      call = this.open(index ?? -1, id);
      newId = call.id;
    } else if (id !== undefined && call.wireId === '') {
      // A generated id is only a stand-in: take the upstream's as soon as it shows up.
      call.wireId = id;
      if (this.isUsable(id)) {
        this.usedIds.add(id);
        call.id = id;
        newId = id;
      }
    }
    this.last = call;
    let newName: string | undefined;
    if (name !== undefined && call.name === '') {
      call.name = name;
      newName = name;
    }
    if (extraContent !== undefined) call.extraContent = extraContent;
    const argumentsDelta = args === undefined || args === '' ? undefined : this.appendTo(call, args);
    if (newId === undefined && newName === undefined && argumentsDelta === undefined) return undefined;
    return { type: 'tool_call_delta', index: call.position, id: newId, name: newName, argumentsDelta };
  }

  /** Starts a call that is known to be new (Anthropic `content_block_start` of a `tool_use`). */
  start(
    key: number,
    id: string | undefined,
    name: string | undefined,
    presetArguments?: string,
  ): ToolCallDeltaEvent {
    const call = this.open(key, id);
    this.last = call;
    if (name !== undefined) call.name = name;
    if (presetArguments !== undefined && presetArguments !== '') {
      call.arguments = presetArguments;
      call.preset = true;
    }
    return {
      type: 'tool_call_delta',
      index: call.position,
      id: call.id,
      name,
      argumentsDelta: call.preset ? presetArguments : undefined,
    };
  }

  /** Appends argument text to the call started under `key` (Anthropic `input_json_delta`). */
  append(key: number, args: string): ToolCallDeltaEvent | undefined {
    const call = this.last?.key === key ? this.last : this.byKey.get(key);
    if (call === undefined || args === '') return undefined;
    return {
      type: 'tool_call_delta',
      index: call.position,
      id: undefined,
      name: undefined,
      argumentsDelta: this.appendTo(call, args),
    };
  }

  /**
   * Drops the arguments of the call under `key` (the latest call when undefined) and marks it
   * refused for `reason`: it finishes with arguments `{}` and `argumentsRefused`.
   */
  refuseArguments(key: number | undefined, reason: string): void {
    const call = key === undefined || this.last?.key === key ? this.last : this.byKey.get(key);
    if (call === undefined) return;
    call.arguments = '';
    call.preset = false;
    call.refused = reason;
  }

  /** Adds a call that arrived whole (recovered from text). */
  add(name: string, args: string): ToolCallDeltaEvent {
    const call = this.open(-2, undefined);
    call.name = name;
    call.arguments = args;
    return {
      type: 'tool_call_delta',
      index: call.position,
      id: call.id,
      name,
      argumentsDelta: args === '' ? undefined : args,
    };
  }

  /**
   * The complete calls in the order first seen; a call with neither name nor arguments is noise and
   * dropped. Ids, names and arguments are judged whole here, so U+0000 or a lone surrogate becomes
   * U+FFFD while a pair split across fragments survives.
   */
  finish(): ModelToolCall[] {
    const result: ModelToolCall[] = [];
    for (const call of this.calls) {
      if (call.name === '' && call.arguments === '' && call.refused === undefined) continue;
      const done: ModelToolCall = {
        id: toStorableText(call.id),
        name: toStorableText(call.name),
        arguments: call.refused === undefined ? toStorableText(call.arguments) : '{}',
      };
      if (call.extraContent !== undefined) done.extraContent = call.extraContent;
      if (call.refused !== undefined) done.argumentsRefused = call.refused;
      result.push(done);
    }
    return result;
  }

  private open(key: number, wireId: string | undefined): PendingCall {
    let id: string;
    if (wireId !== undefined && this.isUsable(wireId)) {
      id = wireId;
    } else {
      do id = generateToolCallId();
      while (!this.isUsable(id));
    }
    this.usedIds.add(id);
    const call: PendingCall = {
      key,
      position: this.calls.length,
      id,
      wireId: wireId ?? '',
      name: '',
      arguments: '',
      preset: false,
      refused: undefined,
      extraContent: undefined,
    };
    this.calls.push(call);
    this.byKey.set(key, call);
    return call;
  }

  private appendTo(call: PendingCall, args: string): string {
    if (call.preset) {
      call.preset = false;
      call.arguments = args;
    } else {
      call.arguments += args;
    }
    return args;
  }

  private isUsable(id: string): boolean {
    return isUsableToolCallId(id) && !this.usedIds.has(id) && !this.reservedIds.has(id);
  }
}

/**
 * The ids a call may keep from its upstream: what every provider we know sends (OpenAI `call_…`,
 * Anthropic `toolu_…`, Mistral's nine letters, vLLM's `chatcmpl-tool-…`, Kimi's `functions.name:0`)
 * and what fits a URL path segment unescaped, a header and an index row. Anything else — longer, or
 * with other characters — is replaced by a generated id; the id only links a call to its result, so
 * the model loses nothing.
 */
const USABLE_TOOL_CALL_ID = /^[A-Za-z0-9_.:-]{1,64}$/;

export function isUsableToolCallId(id: string): boolean {
  return USABLE_TOOL_CALL_ID.test(id);
}

export function generateToolCallId(): string {
  return 'call_' + randomUUID().replaceAll('-', '').slice(0, 24);
}

/**
 * Whether a fragment that maps onto `call` (same index, or no index at all) really begins another
 * call: a different upstream id, or — for upstreams that send neither index nor id — a name arriving
 * once the current call's arguments already form a whole JSON value.
 */
function startsNewCall(
  call: PendingCall,
  id: string | undefined,
  name: string | undefined,
  args: string | undefined,
): boolean {
  if (id !== undefined) return call.wireId !== '' ? id !== call.wireId : call.arguments !== '';
  if (name === undefined || call.name === '') return false;
  if (name !== call.name) return call.arguments === '' || isWholeJson(call.arguments);
  // Same name again: older llama.cpp repeats it on every fragment, so only a fresh argument text after a finished one counts.
  return args !== undefined && args !== '' && isWholeJson(call.arguments);
}

function isWholeJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
