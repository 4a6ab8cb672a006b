import { readFileSync } from 'node:fs';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';
import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import { chatCompletionsPartsRefusal, chatCompletionsToolPairingRefusal } from './multimodal-parts';
import {
  chatChunk,
  type ChunkEnvelope,
  SSE_DONE,
  splitEvenly,
  splitText,
  sseData,
  usageChunk,
  wireUsage,
} from './sse-chunks';
import { openAiFormatRefusal } from './structured-output-rules';

/**
 * A fake OpenAI-compatible Chat Completions server on 127.0.0.1 for unit, end-to-end and benchmark
 * runs. Script its answers in order with `enqueue`, or once for all with `fallback`:
 *
 *   const upstream = await FakeUpstream.start();
 *   upstream.enqueue(toolCalls([{ name: 'read_file', arguments: { path: 'a.txt' } }]), text('Done.'));
 *   // … point OPENAI_BASE_URL at upstream.baseUrl, run, then look at upstream.requests
 *   await upstream.close();
 */

/** One POST /v1/chat/completions as the fake received it. */
export interface RecordedRequest {
  /** 0, 1, 2 … in arrival order. */
  readonly index: number;
  readonly body: ChatCompletionCreateParams;
  readonly headers: IncomingHttpHeaders;
  /** The client went away before the fake finished answering (an abort). */
  aborted: boolean;
  /** Refused: longer than `contextWindow`, or a parameter its model does not take (then no script was used for it). */
  refused?: boolean;
}

type Plan =
  | {
      kind: 'stream';
      frames: string[];
      delayMs: number;
      firstDelayMs: number;
      /** What happens after the last frame: a clean end, the socket destroyed, or nothing at all. */
      then: 'end' | 'reset' | 'hang';
      headers: Record<string, string>;
    }
  | { kind: 'status'; status: number; body: string; headers: Record<string, string> }
  | { kind: 'hang' }
  /** `head`, then `frame` again and again, as fast as the client reads, until it goes away. */
  | { kind: 'endless'; head: string[]; frame: string };

/** One scripted answer; build it with text(), toolCalls(), fixture(), raw(), status(), chunksThen() or hang(). */
export class ScriptedResponse {
  constructor(
    readonly label: string,
    /** @internal */ readonly plan: (request: RecordedRequest) => Plan,
  ) {}
}

/** A scripted answer, or a function choosing one from what the model was sent. */
export type FakeResponse = ScriptedResponse | ((request: RecordedRequest) => FakeResponse);

export interface FakeUsage {
  promptTokens: number;
  completionTokens: number;
}

interface Timing {
  /** Between two chunks. */
  delayMs?: number;
  /** Before the first chunk (after the headers). */
  firstDelayMs?: number;
}

export interface TextOptions extends Timing {
  /** How to split the text: a number of pieces, the pieces themselves, or (default) one per word. */
  pieces?: number | readonly string[];
  /** Sent when the request asked for it (stream_options.include_usage); default 10 prompt tokens, one per piece. */
  usage?: FakeUsage;
  finishReason?: string;
}

export interface FakeToolCall {
  id?: string;
  name: string;
  /** A JSON text (sent exactly as given, even if broken) or a value to serialise. */
  arguments: string | object;
}

export interface ToolCallsOptions extends Timing {
  /** Text the model writes before its calls. */
  text?: string;
  /** Argument fragments per call (default 3). */
  pieces?: number;
  /** Default `tool_calls`. */
  finishReason?: string;
  usage?: FakeUsage;
}

export type MidStreamFailure = 'reset' | 'malformed' | 'error-object' | 'hang';

export const DEFAULT_FIXTURES_DIR = resolve(__dirname, '../fixtures/upstream');

const NO_SCRIPT = status(500, {
  error: { message: 'no scripted response', type: 'server_error', code: null },
});

export class FakeUpstream {
  readonly requests: RecordedRequest[] = [];
  /** Answers a request when the queue is empty; by default a 500 saying "no scripted response". */
  fallback: FakeResponse = NO_SCRIPT;
  /** Requests the client abandoned before the answer was complete. */
  aborted = 0;
  /** TCP connections opened to the fake so far (a client that reuses its connections opens few). */
  connections = 0;
  /**
   * When set, a request over this many tokens (`requestTokens`) is refused with a 400 the way
   * `refuseAs` does: OpenAI's `context_length_exceeded` or Anthropic's "prompt is too long".
   */
  contextWindow: number | null = null;
  refuseAs: 'openai' | 'anthropic' = 'openai';
  /** Awaited before a request is answered (a test may look at the server meanwhile). */
  beforeAnswer: ((request: RecordedRequest) => Promise<void>) | null = null;
  /** Streamed answers sent to their clean end. */
  completed = 0;
  private readonly queue: FakeResponse[] = [];
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
    private readonly basePath: string,
  ) {}

  /**
   * `basePath`: where its API lives — OpenAI's `/v1` by default; an Azure OpenAI resource's v1 API
   * is at `/openai/v1`, and a request anywhere else is a 404 as there.
   */
  static async start(options: { basePath?: string } = {}): Promise<FakeUpstream> {
    const basePath = options.basePath ?? '/v1';
    const server = createServer();
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((done, fail) => {
      server.once('error', fail);
      server.listen(0, '127.0.0.1', () => done());
    });
    const { port } = server.address() as AddressInfo;
    const upstream = new FakeUpstream(server, `http://127.0.0.1:${port}${basePath}`, basePath);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => upstream.handle(req, res));
    server.on('connection', () => (upstream.connections += 1));
    return upstream;
  }

  /** Scripts the next answers, first in first out. */
  enqueue(...responses: FakeResponse[]): this {
    this.queue.push(...responses);
    return this;
  }

  /** Scripted answers not used yet. */
  get pending(): number {
    return this.queue.length;
  }

  /** Forgets requests, scripts and counts, and restores the default fallback. */
  reset(): void {
    this.requests.length = 0;
    this.queue.length = 0;
    this.aborted = 0;
    this.completed = 0;
    this.fallback = NO_SCRIPT;
    this.contextWindow = null;
    this.refuseAs = 'openai';
    this.beforeAnswer = null;
  }

  /** Resolves once `count` requests have arrived in total. */
  waitForRequests(count: number, timeoutMs = 5000): Promise<void> {
    return this.waitUntil(() => this.requests.length >= count, `${count} request(s)`, timeoutMs);
  }

  /** Resolves once `count` requests have been abandoned by the client in total. */
  waitForAborted(count = 1, timeoutMs = 5000): Promise<void> {
    return this.waitUntil(() => this.aborted >= count, `${count} aborted request(s)`, timeoutMs);
  }

  /** Resolves once `count` streamed answers have been sent to their clean end. */
  waitForCompleted(count = 1, timeoutMs = 5000): Promise<void> {
    return this.waitUntil(() => this.completed >= count, `${count} completed answer(s)`, timeoutMs);
  }

  async close(): Promise<void> {
    for (const wake of this.waiters) wake();
    this.server.closeAllConnections();
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  private waitUntil(ready: () => boolean, what: string, timeoutMs: number): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((done, fail) => {
      const check = (): void => {
        if (!ready()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        done();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        fail(
          new Error(
            `FakeUpstream: waited ${timeoutMs} ms for ${what}; have ${this.requests.length} request(s), ${this.aborted} aborted`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  private changed(): void {
    for (const check of [...this.waiters]) check();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'POST' || path !== `${this.basePath}/chat/completions`) {
      sendJson(res, 404, {
        error: {
          message: `FakeUpstream: no route ${req.method} ${path}`,
          type: 'invalid_request_error',
          code: null,
        },
      });
      return;
    }
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      let body: ChatCompletionCreateParams;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8')) as ChatCompletionCreateParams;
      } catch {
        sendJson(res, 400, {
          error: { message: 'FakeUpstream: the body is not JSON', type: 'invalid_request_error', code: null },
        });
        return;
      }
      const request: RecordedRequest = {
        index: this.requests.length,
        body,
        headers: req.headers,
        aborted: false,
      };
      this.requests.push(request);
      this.changed();
      const tokens = this.contextWindow === null ? 0 : requestTokens(body);
      if (this.contextWindow !== null && tokens > this.contextWindow) {
        request.refused = true;
        sendJson(res, 400, tooLongBody(this.refuseAs, tokens, this.contextWindow));
        return;
      }
      const refused = refusedParameter(body);
      if (refused !== undefined) {
        request.refused = true;
        sendJson(res, 400, refused);
        return;
      }
      if (this.beforeAnswer) {
        this.beforeAnswer(request).then(
          () => this.answer(request, res),
          (error: unknown) =>
            sendJson(res, 500, {
              error: {
                message: `FakeUpstream: beforeAnswer threw: ${String(error)}`,
                type: 'server_error',
                code: null,
              },
            }),
        );
        return;
      }
      this.answer(request, res);
    });
  }

  private answer(request: RecordedRequest, res: ServerResponse): void {
    let plan: Plan;
    try {
      plan = resolveResponse(this.queue.shift() ?? this.fallback, request).plan(request);
    } catch (error) {
      sendJson(res, 500, {
        error: {
          message: `FakeUpstream: the script threw: ${String(error)}`,
          type: 'server_error',
          code: null,
        },
      });
      return;
    }
    this.play(plan, request, res);
  }

  private play(plan: Plan, request: RecordedRequest, res: ServerResponse): void {
    const timers = new Set<NodeJS.Timeout>();
    let resetByUs = false;
    res.on('close', () => {
      for (const timer of timers) clearTimeout(timer);
      if (res.writableFinished || resetByUs) return;
      request.aborted = true;
      this.aborted += 1;
      this.changed();
    });
    if (plan.kind === 'hang') return;
    if (plan.kind === 'endless') {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      res.write(plan.head.join(''));
      const pump = (): void => {
        // write() says false once the socket's buffer is full: go on when it drains, not before.
        while (!res.destroyed && res.write(plan.frame));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
      return;
    }
    if (plan.kind === 'status') {
      res.writeHead(plan.status, plan.headers);
      res.end(plan.body);
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      ...plan.headers,
    });
    res.flushHeaders();
    const finish = (): void => {
      if (plan.then === 'end') {
        res.end(() => {
          this.completed += 1;
          this.changed();
        });
      } else if (plan.then === 'reset') {
        resetByUs = true;
        // Once what was written has reached the kernel, so the client reads it before the break.
        res.write('', () => setTimeout(() => res.socket?.destroy(), 5));
      }
    };
    const { frames, delayMs, firstDelayMs } = plan;
    if (delayMs <= 0 && firstDelayMs <= 0) {
      if (frames.length > 0) res.write(frames.join(''));
      finish();
      return;
    }
    let next = 0;
    const step = (): void => {
      if (res.destroyed) return;
      if (next < frames.length) res.write(frames[next++]);
      if (next >= frames.length) {
        finish();
        return;
      }
      const timer = setTimeout(step, delayMs);
      timers.add(timer);
    };
    if (firstDelayMs > 0) timers.add(setTimeout(step, firstDelayMs));
    else step();
  }
}

/** A streamed text answer ending in `finish_reason: "stop"`, a usage chunk when asked for, and `[DONE]`. */
export function text(content: string, options: TextOptions = {}): ScriptedResponse {
  const pieces = splitText(content, options.pieces);
  return new ScriptedResponse(`text(${JSON.stringify(content.slice(0, 40))})`, (request) => {
    const envelope = envelopeFor(request);
    const frames = [sseData(chatChunk({ role: 'assistant', content: '', refusal: null }, null, envelope))];
    for (const piece of pieces) frames.push(sseData(chatChunk({ content: piece }, null, envelope)));
    frames.push(sseData(chatChunk({}, options.finishReason ?? 'stop', envelope)));
    pushUsage(
      frames,
      request,
      envelope,
      options.usage ?? { promptTokens: 10, completionTokens: pieces.length },
    );
    frames.push(SSE_DONE);
    return streamPlan(frames, options);
  });
}

/**
 * Streamed tool calls the way OpenAI sends them: a header per call (index, id, name, `arguments: ""`),
 * then the arguments in several fragments, then `finish_reason` (default `tool_calls`). Calls without
 * an id get `call_fake_<request>_<n>`, unique within one FakeUpstream.
 */
export function toolCalls(calls: readonly FakeToolCall[], options: ToolCallsOptions = {}): ScriptedResponse {
  return new ScriptedResponse(`toolCalls(${calls.map((c) => c.name).join(', ')})`, (request) => {
    const envelope = envelopeFor(request);
    const frames = [sseData(chatChunk({ role: 'assistant', content: null }, null, envelope))];
    for (const piece of splitText(options.text ?? ''))
      frames.push(sseData(chatChunk({ content: piece }, null, envelope)));
    let fragments = 0;
    calls.forEach((call, index) => {
      const id = call.id ?? `call_fake_${request.index}_${index}`;
      const header = { index, id, type: 'function', function: { name: call.name, arguments: '' } };
      frames.push(sseData(chatChunk({ tool_calls: [header] }, null, envelope)));
      const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
      for (const part of args === '' ? [] : splitEvenly(args, options.pieces ?? 3)) {
        frames.push(
          sseData(chatChunk({ tool_calls: [{ index, function: { arguments: part } }] }, null, envelope)),
        );
        fragments += 1;
      }
    });
    frames.push(sseData(chatChunk({}, options.finishReason ?? 'tool_calls', envelope)));
    pushUsage(
      frames,
      request,
      envelope,
      options.usage ?? { promptTokens: 10, completionTokens: fragments + calls.length },
    );
    frames.push(SSE_DONE);
    return streamPlan(frames, options);
  });
}

/**
 * A recorded stream from test/fixtures/upstream (or $FIXTURES_DIR), byte for byte. Many have no
 * `[DONE]` because their recorder did not keep it; `appendDone` adds it.
 */
export function fixture(name: string, options: { appendDone?: boolean } & Timing = {}): ScriptedResponse {
  const body = readFixture(name);
  const full =
    options.appendDone && !body.includes('data: [DONE]')
      ? `${body}${body.endsWith('\n\n') ? '' : '\n\n'}${SSE_DONE}`
      : body;
  // With a delay, each SSE event is its own write.
  const frames = options.delayMs || options.firstDelayMs ? full.split(/(?<=\n\n)/) : [full];
  return new ScriptedResponse(`fixture(${name})`, () => streamPlan(frames, options));
}

/** Any SSE text exactly as given, with a 200. */
export function raw(
  sseText: string,
  options: { headers?: Record<string, string> } & Timing = {},
): ScriptedResponse {
  return new ScriptedResponse('raw', () => streamPlan([sseText], options, 'end', options.headers));
}

/** A plain HTTP answer, e.g. `status(429, undefined, { 'retry-after-ms': '10' })`. Objects are sent as JSON. */
export function status(
  code: number,
  body?: string | object,
  headers: Record<string, string> = {},
): ScriptedResponse {
  const payload =
    body === undefined
      ? {
          error: {
            message: `scripted status ${code}`,
            type: code >= 500 ? 'server_error' : 'invalid_request_error',
            code: null,
          },
        }
      : body;
  const isText = typeof payload === 'string';
  return new ScriptedResponse(`status(${code})`, () => ({
    kind: 'status',
    status: code,
    body: isText ? payload : JSON.stringify(payload),
    headers: { 'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json', ...headers },
  }));
}

/**
 * Some chunks, then a failure: `reset` destroys the socket, `malformed` sends a data line that is not
 * JSON, `error-object` sends `data: {"error": …}` (OpenAI/vLLM style; pass `error` to choose it) and
 * ends, `hang` stays silent until the client aborts. A string chunk is a text delta; an object is
 * sent as the whole chunk.
 */
export function chunksThen(
  chunks: ReadonlyArray<string | object>,
  failure: MidStreamFailure,
  options: { error?: object } & Timing = {},
): ScriptedResponse {
  return new ScriptedResponse(`chunksThen(${failure})`, (request) => {
    const envelope = envelopeFor(request);
    const frames = chunks.map((c) =>
      sseData(typeof c === 'string' ? chatChunk({ content: c }, null, envelope) : c),
    );
    if (failure === 'malformed')
      frames.push(`data: {"id":"${envelope.id}","choices":[{"index":0,"delta":{"content":"x"}\n\n`);
    if (failure === 'error-object') {
      frames.push(
        sseData({
          error: options.error ?? {
            message: 'The model produced invalid output',
            type: 'invalid_request_error',
            code: null,
          },
        }),
      );
    }
    return streamPlan(frames, options, failure === 'reset' || failure === 'hang' ? failure : 'end');
  });
}

/**
 * A text answer that never ends: `piece` as one content delta after another, as fast as the client
 * reads, with no finish_reason, until the client closes the request (which then counts as aborted).
 * Set `reasoning` to stream it as `reasoning_content` instead, or `toolCall` to stream it as the
 * arguments of one tool call that never ends.
 */
export function endless(
  piece: string,
  options: { reasoning?: boolean; toolCall?: { id: string; name: string } } = {},
): ScriptedResponse {
  return new ScriptedResponse('endless', (request) => {
    const envelope = envelopeFor(request);
    const head = [sseData(chatChunk({ role: 'assistant', content: '' }, null, envelope))];
    const call = options.toolCall;
    if (call) {
      const header = {
        index: 0,
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: '' },
      };
      head.push(sseData(chatChunk({ tool_calls: [header] }, null, envelope)));
    }
    const delta = call
      ? { tool_calls: [{ index: 0, function: { arguments: piece } }] }
      : options.reasoning
        ? { reasoning_content: piece }
        : { content: piece };
    return { kind: 'endless', head, frame: sseData(chatChunk(delta, null, envelope)) };
  });
}

/** Never answers; the request counts as aborted once the client gives up. */
export function hang(): ScriptedResponse {
  return new ScriptedResponse('hang', () => ({ kind: 'hang' }));
}

function resolveResponse(response: FakeResponse, request: RecordedRequest): ScriptedResponse {
  let current = response;
  while (typeof current === 'function') current = current(request);
  return current;
}

function envelopeFor(request: RecordedRequest): ChunkEnvelope {
  return {
    id: `chatcmpl-fake${request.index}`,
    model: request.body.model || 'fake-model',
    created: 1_700_000_000 + request.index,
  };
}

function pushUsage(
  frames: string[],
  request: RecordedRequest,
  envelope: ChunkEnvelope,
  usage: FakeUsage,
): void {
  if (request.body.stream_options?.include_usage !== true) return;
  frames.push(sseData(usageChunk(wireUsage(usage.promptTokens, usage.completionTokens), envelope)));
}

function streamPlan(
  frames: string[],
  timing: Timing,
  then: 'end' | 'reset' | 'hang' = 'end',
  headers: Record<string, string> = {},
): Plan {
  return {
    kind: 'stream',
    frames,
    delayMs: timing.delayMs ?? 0,
    firstDelayMs: timing.firstDelayMs ?? 0,
    then,
    headers,
  };
}

const fixtureCache = new Map<string, string>();

function readFixture(name: string): string {
  const dir = process.env.FIXTURES_DIR ?? DEFAULT_FIXTURES_DIR;
  const file = resolve(dir, name);
  let body = fixtureCache.get(file);
  if (body === undefined) {
    body = readFileSync(file, 'utf8');
    fixtureCache.set(file, body);
  }
  return body;
}

function sendJson(res: ServerResponse, code: number, body: object): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/**
 * The tokens of a Chat Completions request as the fake counts them, with o200k_base: each message's
 * content, tool calls' names and arguments, a few tokens of frame per message and per call, and the
 * tools' JSON — the way OpenAI's own accounting goes (written apart from the server's count).
 */
export function requestTokens(body: ChatCompletionCreateParams): number {
  const plain = { disallowedSpecial: new Set<string>() };
  const countTokens = (text: string) => countO200k(text, plain);
  let n = 3;
  for (const m of body.messages) {
    n += 4;
    const content: unknown = m.content;
    if (typeof content === 'string') n += countTokens(content);
    else if (Array.isArray(content)) {
      for (const part of content as { text?: string }[]) n += countTokens(part.text ?? '');
    }
    if (m.role === 'assistant') {
      for (const c of m.tool_calls ?? []) {
        if (c.type === 'function') n += 8 + countTokens(c.function.name) + countTokens(c.function.arguments);
      }
    }
  }
  if (body.tools && body.tools.length > 0) {
    n += 10 + countTokens(JSON.stringify(body.tools.map((t) => (t.type === 'function' ? t.function : t))));
  }
  return n;
}

/**
 * What OpenAI refuses of a request's parameters, as it refuses it: its reasoning models (the
 * o-series, gpt-5*, codex*; not the `-chat` variants) take `max_completion_tokens`, not `max_tokens`;
 * a json_schema `response_format` must follow its rules (structured-output-rules.ts); content parts
 * only where their role takes them, and tool calls answered right after their message
 * (multimodal-parts.ts).
 */
function refusedParameter(body: ChatCompletionCreateParams): object | undefined {
  const format = body.response_format;
  if (format?.type === 'json_schema') {
    const refused = openAiFormatRefusal(format.json_schema, 'response_format.json_schema');
    if (refused !== undefined) {
      return {
        error: { message: refused, type: 'invalid_request_error', param: 'response_format', code: null },
      };
    }
  }
  const messages = body.messages as unknown as Record<string, unknown>[];
  const badPart = chatCompletionsPartsRefusal(messages) ?? chatCompletionsToolPairingRefusal(messages);
  if (badPart !== undefined) {
    return {
      error: { message: badPart, type: 'invalid_request_error', param: 'messages', code: 'invalid_value' },
    };
  }
  const reasons = /^(o\d|gpt-5|codex)/.test(body.model) && !body.model.includes('-chat');
  if (reasons && body.max_tokens !== undefined && body.max_tokens !== null) {
    return {
      error: {
        message:
          "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        type: 'invalid_request_error',
        param: 'max_tokens',
        code: 'unsupported_parameter',
      },
    };
  }
  return undefined;
}

function tooLongBody(style: 'openai' | 'anthropic', tokens: number, window: number): object {
  if (style === 'anthropic') {
    return {
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: `prompt is too long: ${tokens} tokens > ${window} maximum`,
      },
    };
  }
  return {
    error: {
      message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  };
}
