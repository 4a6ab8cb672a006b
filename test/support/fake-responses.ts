import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { responsesContentRefusal } from './multimodal-parts';
import type { AddressInfo } from 'node:net';
import { openAiFormatRefusal } from './structured-output-rules';

/**
 * A fake of OpenAI's Responses API (`POST /v1/responses`, streaming, `store: false`) on 127.0.0.1.
 * It streams what it is scripted to in the API's event shapes (with `sequence_number`s) and, like
 * the real API, refuses with a 400 of the real shape:
 * - a `function_call` without its `function_call_output` later in the input, or an output for no call;
 * - a reasoning item whose `encrypted_content` it did not issue (changed, or another's);
 * - `store: true` with an item reference it does not have (it keeps nothing);
 * - from a model that does not reason (gpt-4o, gpt-4.1 …: any but the o-series, gpt-5* and codex*,
 *   `-chat` variants excepted), `include: ["reasoning.encrypted_content"]` and `reasoning.effort`.
 * Only a model that reasons answers with reasoning items, and with their `encrypted_content` only
 * when it was asked to include it.
 * Cached input is modelled: the input a request shares, from its start, with an earlier one is cached.
 */

export interface ResponsesRecordedRequest {
  readonly index: number;
  readonly body: ResponsesBody;
  readonly headers: IncomingHttpHeaders;
  /** The client went away before the fake finished answering (it closed the request). */
  aborted: boolean;
}

export interface ResponsesBody {
  model: string;
  /** As sent, except that a string (one user message, as the real API takes it) is made that message. */
  input: (Record<string, unknown> & { type?: string; role?: string })[];
  instructions?: string;
  tools?: Record<string, unknown>[];
  tool_choice?: string;
  stream?: boolean;
  store?: boolean;
  include?: string[];
  reasoning?: { effort?: string; summary?: string };
  max_output_tokens?: number;
  text?: { format?: { type?: string; name?: unknown; schema?: unknown; strict?: unknown } };
}

export type ResponsesScript =
  | {
      kind: 'answer';
      text?: string;
      calls?: { name: string; arguments: Record<string, unknown> }[];
      reasoning?: string;
      /** How many reasoning items carry `reasoning` (default 1). */
      reasoningItems?: number;
      /** Each item's `encrypted_content` padded to at least this many characters (a hostile upstream). */
      encryptedChars?: number;
      incomplete?: 'max_output_tokens' | 'content_filter';
    }
  | { kind: 'status'; status: number; message: string; type: string }
  /** A hostile upstream: one text delta event whose line goes on for `chars` characters without a line break. */
  | { kind: 'long-line'; chars: number };

export const responsesText = (text: string, reasoning?: string): ResponsesScript => ({
  kind: 'answer',
  text,
  reasoning,
});
export const responsesCalls = (
  calls: { name: string; arguments: Record<string, unknown> }[],
  reasoning?: string,
): ResponsesScript => ({ kind: 'answer', calls, reasoning });
export const responsesStatus = (status: number, message: string, type = 'server_error'): ResponsesScript => ({
  kind: 'status',
  status,
  message,
  type,
});

export class FakeResponses {
  readonly requests: ResponsesRecordedRequest[] = [];
  readonly refusals: string[] = [];
  private readonly scripts: ResponsesScript[] = [];
  private readonly secret = randomBytes(16);
  private readonly seen: string[] = [];
  /** Padded encrypted contents issued, by item id. */
  private readonly issued = new Map<string, string>();
  private ids = 0;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<FakeResponses> {
    const server = createServer();
    const fake = new FakeResponses(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => fake.handle(req.url ?? '', req.headers, Buffer.concat(chunks).toString(), res));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
    return fake;
  }

  /** The base URL to give the SDK (OPENAI_BASE_URL; it adds /responses). */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  enqueue(...scripts: ResponsesScript[]): void {
    this.scripts.push(...scripts);
  }

  reset(): void {
    this.requests.length = 0;
    this.refusals.length = 0;
    this.scripts.length = 0;
    this.seen.length = 0;
    this.issued.clear();
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((done) => this.server.close(() => done()));
  }

  /** The encrypted content the fake gives a reasoning item (opaque, like the real one). */
  encrypted(id: string, summary: string): string {
    return createHmac('sha256', this.secret).update(`${id}:${summary}`).digest('base64');
  }

  /** The encrypted content of a new item, padded to `chars` when asked. */
  private issue(id: string, summary: string, chars: number): string {
    const content = this.encrypted(id, summary);
    if (content.length >= chars) return content;
    const padded = content + 'A'.repeat(chars - content.length);
    this.issued.set(id, padded);
    return padded;
  }

  private handle(url: string, headers: IncomingHttpHeaders, raw: string, res: ServerResponse): void {
    if (!url.startsWith('/v1/responses'))
      return this.error(res, 404, 'invalid_request_error', `Unknown path ${url}`);
    let body: ResponsesBody;
    try {
      body = JSON.parse(raw) as ResponsesBody;
    } catch {
      return this.error(
        res,
        400,
        'invalid_request_error',
        'We could not parse the JSON body of your request.',
      );
    }
    const input: unknown = body.input;
    if (typeof input === 'string') body.input = [{ role: 'user', content: input }];
    const request: ResponsesRecordedRequest = { index: this.requests.length, body, headers, aborted: false };
    this.requests.push(request);
    res.on('close', () => {
      if (!res.writableFinished) request.aborted = true;
    });
    const refused = this.validate(body);
    if (refused !== undefined) {
      this.refusals.push(refused.message);
      return this.error(res, 400, 'invalid_request_error', refused.message, refused.param, refused.code);
    }
    const script = this.scripts.shift() ?? responsesText('(no script)');
    if (script.kind === 'status') return this.error(res, script.status, script.type, script.message);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': `req_${this.ids++}` });
    if (script.kind === 'long-line') return longLine(res, script.chars);
    res.end(this.frames(body, script).join(''));
  }

  private error(
    res: ServerResponse,
    status: number,
    type: string,
    message: string,
    param: string | null = null,
    code: string | null = null,
  ): void {
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${this.ids++}` });
    res.end(JSON.stringify({ error: { message, type, param, code } }));
  }

  private validate(body: ResponsesBody): { message: string; param: string; code?: string } | undefined {
    if (typeof body.model !== 'string' || body.model === '')
      return { message: "Missing required parameter: 'model'.", param: 'model' };
    if (!reasons(body.model)) {
      if (body.include?.includes('reasoning.encrypted_content')) {
        return {
          message: 'Encrypted content is not supported with this model.',
          param: 'include',
          code: 'unsupported_parameter',
        };
      }
      if (body.reasoning?.effort !== undefined) {
        return {
          message: "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
          param: 'reasoning.effort',
          code: 'unsupported_parameter',
        };
      }
    }
    if (body.text?.format !== undefined) {
      const refused = openAiFormatRefusal(body.text.format, 'text.format');
      if (refused !== undefined) return { message: refused, param: 'text.format' };
    }
    if (!Array.isArray(body.input)) return { message: "Invalid type for 'input'.", param: 'input' };
    const badContent = responsesContentRefusal(body.input);
    if (badContent !== undefined) return { message: badContent, param: 'input', code: 'invalid_value' };
    const calls = new Set<string>();
    const outputs = new Set<string>();
    for (const [i, item] of body.input.entries()) {
      if (item.type === 'function_call') calls.add(String(item.call_id));
      if (item.type === 'function_call_output') {
        if (!calls.has(String(item.call_id))) {
          return {
            message: `No tool call found for function call output with call_id ${String(item.call_id)}.`,
            param: `input.${i}`,
          };
        }
        outputs.add(String(item.call_id));
      }
      if (item.type === 'reasoning') {
        const summary = ((item.summary ?? []) as { text?: string }[]).map((s) => s.text ?? '').join('');
        const issued = this.issued.get(String(item.id)) ?? this.encrypted(String(item.id), summary);
        if (item.encrypted_content !== issued) {
          return {
            message: `The encrypted content for item ${String(item.id)} could not be verified.`,
            param: `input.${i}`,
          };
        }
      }
      if (item.type === 'item_reference') {
        return {
          message: `Item with id '${String(item.id)}' not found. Items are not persisted when \`store\` is set to false.`,
          param: `input.${i}`,
        };
      }
    }
    for (const id of calls) {
      if (!outputs.has(id))
        return { message: `No tool output found for function call ${id}.`, param: 'input' };
    }
    return undefined;
  }

  private frames(body: ResponsesBody, script: Extract<ResponsesScript, { kind: 'answer' }>): string[] {
    const frames: string[] = [];
    let seq = 0;
    const send = (type: string, data: Record<string, unknown>) =>
      frames.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data, sequence_number: seq++ })}\n\n`);
    const id = `resp_${this.ids++}`;
    const base = {
      id,
      object: 'response',
      created_at: 1,
      model: body.model,
      status: 'in_progress',
      output: [] as unknown[],
      error: null,
      incomplete_details: null,
    };
    send('response.created', { response: base });
    send('response.in_progress', { response: base });
    const output: Record<string, unknown>[] = [];
    let outputTokens = 0;
    let reasoningTokens = 0;
    const reasoning = reasons(body.model) ? script.reasoning : undefined;
    const encrypted = body.include?.includes('reasoning.encrypted_content') === true;
    for (let k = 0; reasoning !== undefined && k < (script.reasoningItems ?? 1); k++) {
      const index = output.length;
      const rid = `rs_${this.ids++}`;
      send('response.output_item.added', {
        output_index: index,
        item: { id: rid, type: 'reasoning', summary: [] },
      });
      send('response.reasoning_summary_part.added', {
        item_id: rid,
        output_index: index,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      });
      for (const piece of pieces(reasoning)) {
        send('response.reasoning_summary_text.delta', {
          item_id: rid,
          output_index: index,
          summary_index: 0,
          delta: piece,
        });
      }
      send('response.reasoning_summary_text.done', {
        item_id: rid,
        output_index: index,
        summary_index: 0,
        text: reasoning,
      });
      const item: Record<string, unknown> = {
        id: rid,
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: reasoning }],
      };
      if (encrypted) item.encrypted_content = this.issue(rid, reasoning, script.encryptedChars ?? 0);
      send('response.output_item.done', { output_index: index, item });
      output.push(item);
      reasoningTokens += tokens(reasoning) + 8;
    }
    if (script.text !== undefined) {
      const index = output.length;
      const mid = `msg_${this.ids++}`;
      send('response.output_item.added', {
        output_index: index,
        item: { id: mid, type: 'message', role: 'assistant', status: 'in_progress', content: [] },
      });
      send('response.content_part.added', {
        item_id: mid,
        output_index: index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      });
      for (const piece of pieces(script.text)) {
        send('response.output_text.delta', {
          item_id: mid,
          output_index: index,
          content_index: 0,
          delta: piece,
          logprobs: [],
        });
      }
      send('response.output_text.done', {
        item_id: mid,
        output_index: index,
        content_index: 0,
        text: script.text,
        logprobs: [],
      });
      const item = {
        id: mid,
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: script.text, annotations: [] }],
      };
      send('response.output_item.done', { output_index: index, item });
      output.push(item);
      outputTokens += tokens(script.text);
    }
    for (const call of script.calls ?? []) {
      const index = output.length;
      const fid = `fc_${this.ids++}`;
      const callId = `call_${this.ids++}`;
      const args = JSON.stringify(call.arguments);
      send('response.output_item.added', {
        output_index: index,
        item: {
          id: fid,
          type: 'function_call',
          status: 'in_progress',
          call_id: callId,
          name: call.name,
          arguments: '',
        },
      });
      for (const piece of pieces(args)) {
        send('response.function_call_arguments.delta', { item_id: fid, output_index: index, delta: piece });
      }
      send('response.function_call_arguments.done', { item_id: fid, output_index: index, arguments: args });
      const item = {
        id: fid,
        type: 'function_call',
        status: 'completed',
        call_id: callId,
        name: call.name,
        arguments: args,
      };
      send('response.output_item.done', { output_index: index, item });
      output.push(item);
      outputTokens += tokens(args);
    }
    const input = JSON.stringify([body.instructions ?? '', body.tools ?? [], body.input]);
    let cached = 0;
    for (const earlier of this.seen) cached = Math.max(cached, commonPrefix(earlier, input));
    this.seen.push(input);
    const usage = {
      input_tokens: tokens(input),
      input_tokens_details: { cached_tokens: Math.floor(cached / 4) },
      output_tokens: outputTokens + reasoningTokens,
      output_tokens_details: { reasoning_tokens: reasoningTokens },
      total_tokens: tokens(input) + outputTokens + reasoningTokens,
    };
    if (script.incomplete) {
      send('response.incomplete', {
        response: {
          ...base,
          status: 'incomplete',
          incomplete_details: { reason: script.incomplete },
          output,
          usage,
        },
      });
    } else {
      send('response.completed', { response: { ...base, status: 'completed', output, usage } });
    }
    return frames;
  }
}

/** Whether the real API treats the model as one that reasons. */
function reasons(model: string): boolean {
  return /^(o\d|gpt-5|codex)/.test(model) && !model.includes('-chat');
}

/**
 * An event whose data line goes on for `chars` characters, written as fast as the client reads,
 * then the end of the body; stops when the client goes away.
 */
function longLine(res: ServerResponse, chars: number): void {
  const piece = 'a'.repeat(64 * 1024);
  let left = chars;
  res.write('event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"');
  const pump = (): void => {
    while (left > 0 && !res.destroyed) {
      const next = left >= piece.length ? piece : piece.slice(0, left);
      left -= next.length;
      if (!res.write(next)) return;
    }
    if (!res.destroyed) res.end();
  };
  res.on('drain', pump);
  pump();
}

function tokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

function pieces(text: string): string[] {
  const out: string[] = [];
  const size = Math.max(1, Math.ceil(text.length / 3));
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
