import {
  ModelError,
  type ModelProvider,
  type ModelRequest,
  type ModelStreamEvent,
  type ModelToolCall,
} from '../../src/llm/model-provider';

/** One scripted model call: the events it yields, given the request and the call's signal. */
export type ModelScript = (request: ModelRequest, signal: AbortSignal) => AsyncIterable<ModelStreamEvent>;

const USAGE = { promptTokens: 10, completionTokens: 5 };

/**
 * A ModelProvider that answers from a script, in order, with no HTTP: the orchestrator's own seam.
 * `requests` records what each call was sent; `started` resolves when a call begins.
 */
export class ScriptedModel implements ModelProvider {
  readonly requests: ModelRequest[] = [];
  private readonly scripts: ModelScript[] = [];
  private startWaiters: (() => void)[] = [];

  enqueue(...scripts: ModelScript[]): void {
    this.scripts.push(...scripts);
  }

  reset(): void {
    this.scripts.length = 0;
    this.requests.length = 0;
  }

  /** Resolves when the next model call starts. */
  nextCall(): Promise<void> {
    return new Promise((resolve) => this.startWaiters.push(resolve));
  }

  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelStreamEvent> {
    this.requests.push(request);
    const script = this.scripts.shift();
    const waiters = this.startWaiters;
    this.startWaiters = [];
    for (const w of waiters) w();
    if (!script)
      return fail(new ModelError('UPSTREAM_ERROR', 'the script has no more answers', false))(request, signal);
    return script(request, signal);
  }
}

/** A text answer in pieces, then `stop`. */
export function answer(...pieces: string[]): ModelScript {
  return async function* () {
    for (const delta of pieces) yield { type: 'text', delta };
    yield { type: 'finish', finishReason: 'stop', usage: USAGE, toolCalls: [] };
  };
}

/** Tool calls (arguments as objects), then `tool_calls`. */
export function calls(...list: { id?: string; name: string; arguments: unknown }[]): ModelScript {
  return async function* () {
    const toolCalls: ModelToolCall[] = list.map((c, i) => ({
      id: c.id ?? `call_${i}_${Math.random().toString(36).slice(2, 8)}`,
      name: c.name,
      arguments: JSON.stringify(c.arguments),
    }));
    yield { type: 'finish', finishReason: 'tool_calls', usage: USAGE, toolCalls };
  };
}

/**
 * Tool calls as an upstream streams them — each call's id and name, then its arguments in two
 * fragments — then, once `beforeFinish` resolves, `tool_calls` with each call's `finalArguments`
 * (by default what was streamed).
 */
export function streamedCalls(
  list: { name: string; arguments: unknown; finalArguments?: unknown }[],
  beforeFinish: () => Promise<void> = () => Promise.resolve(),
): ModelScript {
  return async function* () {
    const toolCalls: ModelToolCall[] = [];
    for (const [index, c] of list.entries()) {
      const id = `call_${index}_${Math.random().toString(36).slice(2, 8)}`;
      const text = JSON.stringify(c.arguments);
      const half = Math.floor(text.length / 2);
      yield { type: 'tool_call_delta', index, id, name: c.name };
      yield { type: 'tool_call_delta', index, argumentsDelta: text.slice(0, half) };
      yield { type: 'tool_call_delta', index, argumentsDelta: text.slice(half) };
      toolCalls.push({ id, name: c.name, arguments: JSON.stringify(c.finalArguments ?? c.arguments) });
    }
    await beforeFinish();
    yield { type: 'finish', finishReason: 'tool_calls', usage: USAGE, toolCalls };
  };
}

/** Fails the call with `error` (after `pieces` of text). */
export function fail(error: Error, ...pieces: string[]): ModelScript {
  return async function* () {
    for (const delta of pieces) yield { type: 'text', delta };
    throw error;
  };
}

/** Streams `pieces`, then waits until `release` resolves (or the call is aborted), then finishes. */
export function textUntil(release: Promise<void>, pieces: string[], rest: string[] = []): ModelScript {
  return async function* (_request, signal) {
    for (const delta of pieces) yield { type: 'text', delta };
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      void release.then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
    for (const delta of rest) yield { type: 'text', delta };
    yield { type: 'finish', finishReason: 'stop', usage: USAGE, toolCalls: [] };
  };
}

/** A promise with its resolve function, for `textUntil`. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
