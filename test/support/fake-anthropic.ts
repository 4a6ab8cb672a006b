import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicBlockRefusal } from './multimodal-parts';
import { resolve } from 'node:path';
import { anthropicFormatRefusal } from './structured-output-rules';

/**
 * A fake of Anthropic's Messages API (`POST /v1/messages`, streaming) on 127.0.0.1. It streams what
 * it is scripted to, in the API's event shapes, and — like the real API — refuses a conversation
 * the real one refuses, with a 400 shaped like the real one's:
 * - a `tool_use` without its `tool_result` in the user turn right after (or a result for no call);
 * - a thinking block whose text or signature changed (signatures are the fake's own HMAC), or — with
 *   thinking on — a tool loop whose last assistant turn does not start with its thinking block;
 * - a thinking budget under 1024 or not below max_tokens; more than 4 cache breakpoints;
 * - a text block (system or message) that is empty or only whitespace, a message with no content
 *   (but a final assistant one), a `tool_use` id outside `^[a-zA-Z0-9_-]+$` or used twice;
 * - an `image` or `document` block outside a user turn, or whose base64 is not its media type.
 * Prompt caching is modelled: each `cache_control` breakpoint caches the prefix up to it (tools,
 * system, messages, in that order), and a later request starting with a cached prefix reads it.
 */

export interface AnthropicRecordedRequest {
  readonly index: number;
  readonly body: AnthropicBody;
  readonly headers: IncomingHttpHeaders;
}

/** The request body, loosely typed: the fake checks it as the real API would. */
export interface AnthropicBody {
  model: string;
  max_tokens: number;
  system?: string | Block[];
  messages: { role: string; content: string | Block[] }[];
  tools?: (Record<string, unknown> & { name: string })[];
  tool_choice?: { type: string };
  thinking?: { type: string; budget_tokens?: number };
  output_config?: { format?: unknown };
  stream?: boolean;
}

type Block = Record<string, unknown> & { type: string };

/** One block of a scripted answer. */
export type AnswerBlock =
  | { type: 'thinking'; thinking: string }
  | { type: 'redacted_thinking' }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; name: string; input: Record<string, unknown>; id?: string };

export type AnthropicScript =
  | { kind: 'answer'; blocks: AnswerBlock[]; stopReason?: string }
  | { kind: 'status'; status: number; type: string; message: string }
  | { kind: 'raw'; text: string }
  /** Events made as they are sent (written as the client reads them), for streams too big to hold. */
  | { kind: 'stream'; events: () => Iterable<Record<string, unknown> & { type: string }> };

export const anthropicText = (text: string, thinking?: string): AnthropicScript => ({
  kind: 'answer',
  blocks: [...(thinking ? [{ type: 'thinking' as const, thinking }] : []), { type: 'text', text }],
});

export const anthropicToolUse = (
  calls: { name: string; input: Record<string, unknown> }[],
  options: { text?: string; thinking?: string; redacted?: boolean } = {},
): AnthropicScript => ({
  kind: 'answer',
  blocks: [
    ...(options.thinking ? [{ type: 'thinking' as const, thinking: options.thinking }] : []),
    ...(options.redacted ? [{ type: 'redacted_thinking' as const }] : []),
    ...(options.text ? [{ type: 'text' as const, text: options.text }] : []),
    ...calls.map((c) => ({ type: 'tool_use' as const, ...c })),
  ],
  stopReason: 'tool_use',
});

export const anthropicStatus = (status: number, type: string, message: string): AnthropicScript => ({
  kind: 'status',
  status,
  type,
  message,
});

/** A recorded stream of test/fixtures/upstream/, replayed byte for byte. */
export const anthropicFixture = (name: string): AnthropicScript => ({
  kind: 'raw',
  text: readFileSync(resolve(__dirname, '../fixtures/upstream', name), 'utf8'),
});

/**
 * A hostile answer: a thinking block whose `signature_delta`s add up to `signatureChars` (in pieces
 * of `pieceChars`), then the text `text`. Made lazily, so the fake never holds it whole.
 */
export const anthropicSignatureFlood = (
  signatureChars: number,
  pieceChars: number,
  text: string,
): AnthropicScript => ({
  kind: 'stream',
  events: function* () {
    yield {
      type: 'message_start',
      message: {
        id: 'msg_flood',
        type: 'message',
        role: 'assistant',
        model: 'claude-x',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 },
      },
    };
    yield {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    };
    yield { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm.' } };
    const piece = 'S'.repeat(pieceChars);
    for (let sent = 0; sent < signatureChars; sent += pieceChars) {
      yield { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: piece } };
    }
    yield { type: 'content_block_stop', index: 0 };
    yield { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } };
    yield { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text } };
    yield { type: 'content_block_stop', index: 1 };
    yield {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 5 },
    };
    yield { type: 'message_stop' };
  },
});

export class FakeAnthropic {
  readonly requests: AnthropicRecordedRequest[] = [];
  /** The 400s it answered (what the real API would have refused). */
  readonly refusals: string[] = [];
  private readonly scripts: AnthropicScript[] = [];
  private readonly secret = randomBytes(16);
  private readonly redacted = new Set<string>();
  private readonly cache = new Set<string>();
  private ids = 0;
  /** Streamed answers (`kind: 'stream'`) whose client closed the request before their last event. */
  closedEarly = 0;
  /** Bytes written of streamed answers (`kind: 'stream'`). */
  streamedBytes = 0;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<FakeAnthropic> {
    const server = createServer();
    const fake = new FakeAnthropic(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => fake.handle(req.url ?? '', req.headers, Buffer.concat(chunks).toString(), res));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
    return fake;
  }

  /** The base URL to give the SDK (it adds /v1/messages). */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  enqueue(...scripts: AnthropicScript[]): void {
    this.scripts.push(...scripts);
  }

  reset(): void {
    this.requests.length = 0;
    this.refusals.length = 0;
    this.scripts.length = 0;
    this.cache.clear();
    this.closedEarly = 0;
    this.streamedBytes = 0;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((done) => this.server.close(() => done()));
  }

  /** The signature the fake gives a thinking text (the real API's is opaque too). */
  signature(thinking: string): string {
    return createHmac('sha256', this.secret).update(thinking).digest('base64');
  }

  private handle(url: string, headers: IncomingHttpHeaders, raw: string, res: ServerResponse): void {
    if (!url.startsWith('/v1/messages')) return this.error(res, 404, 'not_found_error', `Not found: ${url}`);
    let body: AnthropicBody;
    try {
      body = JSON.parse(raw) as AnthropicBody;
    } catch {
      return this.error(res, 400, 'invalid_request_error', 'The request body is not valid JSON.');
    }
    this.requests.push({ index: this.requests.length, body, headers });
    const refused = this.validate(body);
    if (refused !== undefined) {
      this.refusals.push(refused);
      return this.error(res, 400, 'invalid_request_error', refused);
    }
    const script = this.scripts.shift() ?? anthropicText('(no script)');
    if (script.kind === 'status') return this.error(res, script.status, script.type, script.message);
    if (body.stream !== true && script.kind === 'answer') {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${this.ids++}` });
      res.end(JSON.stringify(this.message(body, script)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': `req_${this.ids++}` });
    if (script.kind === 'raw') {
      res.end(script.text);
      return;
    }
    if (script.kind === 'stream') {
      void this.stream(res, script.events());
      return;
    }
    const frames = this.answer(body, script);
    res.end(frames.join(''));
  }

  /** Writes each event as the client takes it; stops (counting it) when the client closes first. */
  private async stream(res: ServerResponse, events: Iterable<{ type: string }>): Promise<void> {
    let closed = false;
    res.once('close', () => (closed = true));
    for (const event of events) {
      if (closed || res.destroyed) {
        this.closedEarly++;
        return;
      }
      const frame = `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
      this.streamedBytes += Buffer.byteLength(frame);
      if (!res.write(frame)) {
        await new Promise<void>((done) => {
          res.once('drain', done);
          res.once('close', done);
        });
      }
    }
    res.end();
  }

  private error(res: ServerResponse, status: number, type: string, message: string): void {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${this.ids++}` });
    res.end(JSON.stringify({ type: 'error', error: { type, message } }));
  }

  /** What the real API refuses, in its words; undefined when it would accept the request. */
  private validate(body: AnthropicBody): string | undefined {
    if (typeof body.model !== 'string' || body.model === '') return 'model: Field required';
    if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
    if (!Array.isArray(body.messages) || body.messages.length === 0)
      return 'messages: at least one message is required';
    const format = anthropicFormatRefusal(body.output_config?.format);
    if (format !== undefined) return format;
    if (body.thinking?.type === 'enabled') {
      const budget = body.thinking.budget_tokens ?? 0;
      if (budget < 1024)
        return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
      if (budget >= body.max_tokens) return '`max_tokens` must be greater than `thinking.budget_tokens`.';
    }
    let breakpoints = 0;
    const count = (blocks: unknown) => {
      if (!Array.isArray(blocks)) return;
      for (const b of blocks as Block[]) if (b.cache_control) breakpoints++;
    };
    count(body.tools);
    count(body.system);
    for (const m of body.messages) count(m.content);
    if (breakpoints > 4)
      return `A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.`;

    for (const [j, b] of (Array.isArray(body.system) ? body.system : []).entries()) {
      const refused = textRefusal(b, `system.${j}`);
      if (refused !== undefined) return refused;
    }
    const messages = body.messages.map((m) => ({ role: m.role, content: blocksOf(m.content) }));
    if (messages[0].role !== 'user') return 'messages: first message must use the "user" role';
    const toolUseIds = new Set<string>();
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i];
      if (m.content.length === 0 && !(m.role === 'assistant' && i === messages.length - 1)) {
        return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
      }
      for (const [j, b] of m.content.entries()) {
        const refused =
          textRefusal(b, `messages.${i}.content.${j}`) ??
          anthropicBlockRefusal(m.role, b, `messages.${i}.content.${j}`) ??
          toolResultContentRefusal(b, `messages.${i}.content.${j}`);
        if (refused !== undefined) return refused;
        if (b.type === 'tool_use') {
          if (toolUseIds.has(String(b.id)))
            return `messages.${i}.content.${j}: \`tool_use\` ids must be unique`;
          toolUseIds.add(String(b.id));
        }
        if (
          b.type === 'thinking' &&
          (m.role !== 'assistant' || b.signature !== this.signature(String(b.thinking)))
        ) {
          return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
        }
        if (b.type === 'tool_use' && !/^[a-zA-Z0-9_-]+$/.test(String(b.id))) {
          return `messages.${i}.content.${j}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
        }
        if (b.type === 'redacted_thinking' && !this.redacted.has(String(b.data))) {
          return `messages.${i}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`;
        }
      }
      const uses =
        m.role === 'assistant' ? m.content.filter((b) => b.type === 'tool_use').map((b) => String(b.id)) : [];
      const next = messages[i + 1];
      const results = next?.role === 'user' ? next.content.filter((b) => b.type === 'tool_result') : [];
      if (uses.length > 0) {
        const answered = new Set(results.map((b) => String(b.tool_use_id)));
        const missing = uses.filter((id) => !answered.has(id));
        if (missing.length > 0) {
          return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
        }
        const firstOther = next.content.findIndex((b) => b.type !== 'tool_result');
        if (firstOther >= 0 && firstOther < results.length) {
          return `messages.${i + 1}: \`tool_result\` blocks must come first in the content of the user message.`;
        }
      }
      if (m.role === 'user') {
        const previous = messages[i - 1];
        const asked = new Set(
          previous?.role === 'assistant'
            ? previous.content.filter((b) => b.type === 'tool_use').map((b) => String(b.id))
            : [],
        );
        for (const [j, b] of m.content.entries()) {
          if (b.type === 'tool_result' && !asked.has(String(b.tool_use_id))) {
            return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(b.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
          }
        }
      }
    }
    if (body.thinking?.type === 'enabled') {
      const last = messages[messages.length - 1];
      const continuing = last.role === 'user' && last.content.some((b) => b.type === 'tool_result');
      const assistantIndex = messages.length - 2;
      const assistant = messages[assistantIndex];
      if (continuing && assistant?.role === 'assistant') {
        const first = assistant.content[0]?.type;
        if (first !== 'thinking' && first !== 'redacted_thinking') {
          return `messages.${assistantIndex}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`.`;
        }
      }
    }
    return undefined;
  }

  /** The SSE frames of a scripted answer, with usage that models the prompt cache. */
  private answer(body: AnthropicBody, script: Extract<AnthropicScript, { kind: 'answer' }>): string[] {
    const usage = this.cacheUsage(body);
    const frames: string[] = [];
    const send = (type: string, data: Record<string, unknown>) =>
      frames.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send('message_start', {
      message: {
        id: `msg_${this.ids++}`,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    let output = 0;
    script.blocks.forEach((block, index) => {
      switch (block.type) {
        case 'thinking':
          send('content_block_start', {
            index,
            content_block: { type: 'thinking', thinking: '', signature: '' },
          });
          for (const piece of pieces(block.thinking)) {
            send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } });
          }
          send('content_block_delta', {
            index,
            delta: { type: 'signature_delta', signature: this.signature(block.thinking) },
          });
          output += tokens(block.thinking);
          break;
        case 'redacted_thinking': {
          const data = randomBytes(24).toString('base64');
          this.redacted.add(data);
          send('content_block_start', { index, content_block: { type: 'redacted_thinking', data } });
          break;
        }
        case 'text':
          send('content_block_start', { index, content_block: { type: 'text', text: '' } });
          for (const piece of pieces(block.text)) {
            send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
          }
          output += tokens(block.text);
          break;
        case 'tool_use': {
          const id =
            block.id ?? `toolu_${createHash('sha256').update(`${this.ids++}`).digest('hex').slice(0, 24)}`;
          send('content_block_start', {
            index,
            content_block: { type: 'tool_use', id, name: block.name, input: {} },
          });
          const json = JSON.stringify(block.input);
          send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } });
          for (const piece of pieces(json)) {
            send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
          }
          output += tokens(json);
          break;
        }
      }
      send('content_block_stop', { index });
    });
    send('message_delta', {
      delta: { stop_reason: script.stopReason ?? 'end_turn', stop_sequence: null },
      usage: { output_tokens: output },
    });
    send('message_stop', {});
    return frames;
  }

  /** A scripted answer as one JSON message (a request without `stream: true`). */
  private message(
    body: AnthropicBody,
    script: Extract<AnthropicScript, { kind: 'answer' }>,
  ): Record<string, unknown> {
    const content = script.blocks.map((block) => {
      switch (block.type) {
        case 'thinking':
          return { ...block, signature: this.signature(block.thinking) };
        case 'redacted_thinking': {
          const data = randomBytes(24).toString('base64');
          this.redacted.add(data);
          return { type: 'redacted_thinking', data };
        }
        case 'text':
          return { type: 'text', text: block.text };
        case 'tool_use':
          return {
            type: 'tool_use',
            id: block.id ?? `toolu_${this.ids++}`,
            name: block.name,
            input: block.input,
          };
      }
    });
    return {
      id: `msg_${this.ids++}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content,
      stop_reason: script.stopReason ?? 'end_turn',
      stop_sequence: null,
      usage: { ...this.cacheUsage(body), output_tokens: 1 },
    };
  }

  /** Input tokens split as the real API reports them: read from the cache, written to it, the rest. */
  private cacheUsage(body: AnthropicBody): {
    input_tokens: number;
    cache_read_input_tokens: number;
    cache_creation_input_tokens: number;
  } {
    const parts: { text: string; breakpoint: boolean }[] = [];
    const add = (prefix: string, block: unknown) => {
      const { cache_control: mark, ...rest } = block as Block;
      parts.push({ text: prefix + JSON.stringify(rest), breakpoint: mark !== undefined });
    };
    for (const tool of body.tools ?? []) add('tool:', tool);
    for (const block of blocksOf(body.system ?? '')) add('system:', block);
    for (const m of body.messages) for (const block of blocksOf(m.content)) add(`${m.role}:`, block);
    // A breakpoint writes the prefix up to it; a lookup finds the longest cached prefix ending at
    // any block boundary up to the last breakpoint (the real API looks back from each breakpoint).
    let prefix = '';
    let read = 0;
    let written = 0;
    const lastBreakpoint = parts.map((p) => p.breakpoint).lastIndexOf(true);
    const writes: string[] = [];
    let lastSize = 0;
    parts.forEach((part, i) => {
      prefix += part.text;
      const hash = createHash('sha256').update(prefix).digest('hex');
      if (i <= lastBreakpoint && this.cache.has(hash)) read = tokens(prefix);
      if (part.breakpoint) {
        writes.push(hash);
        lastSize = tokens(prefix);
      }
    });
    if (lastBreakpoint >= 0) written = Math.max(0, lastSize - read);
    for (const hash of writes) this.cache.add(hash);
    return {
      input_tokens: Math.max(1, tokens(prefix) - read - written),
      cache_read_input_tokens: read,
      cache_creation_input_tokens: written,
    };
  }
}

/** The real API's refusal of a text block without text, or with nothing but whitespace. */
function textRefusal(block: Block, at: string): string | undefined {
  if (block.type !== 'text') return undefined;
  if (typeof block.text !== 'string' || block.text === '')
    return `${at}.text: text content blocks must be non-empty`;
  if (block.text.trim() === '') return `${at}.text: text content blocks must contain non-whitespace text`;
  return undefined;
}

/**
 * A `tool_result`'s content as the API takes it: a string, or text, `image` and `document` blocks
 * (base64, the same rules as in a user turn); any other block is refused.
 */
function toolResultContentRefusal(block: Block, at: string): string | undefined {
  if (block.type !== 'tool_result' || !Array.isArray(block.content)) return undefined;
  for (const [k, inner] of (block.content as Block[]).entries()) {
    const where = `${at}.content.${k}`;
    if (inner.type !== 'text' && inner.type !== 'image' && inner.type !== 'document') {
      return `${where}: Input tag '${String(inner.type)}' found using 'type' does not match any of the expected tags: 'text', 'image', 'search_result', 'document'`;
    }
    const refused = textRefusal(inner, where) ?? anthropicBlockRefusal('user', inner, where);
    if (refused !== undefined) return refused;
  }
  return undefined;
}

function blocksOf(content: string | Block[]): Block[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

/** About four characters a token, as estimates go. */
function tokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** A text in a few pieces, as a model streams it. */
function pieces(text: string): string[] {
  const out: string[] = [];
  const size = Math.max(1, Math.ceil(text.length / 3));
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
