// The floor: the same job as one Loopwright run with no framework and no database.
//
// POST /v1/chat {"prompt", "model"?} → text/event-stream with the same events Loopwright sends:
// run_started; the model is called (fetch, streamed, its SSE parsed); tool_call_start, step_finished;
// read_file "runs" (fs.readFile of the asked file under WORKSPACE_ROOT); tool_call_result; the model
// is called again and every content delta is a `text` event; step_finished; done.
// GET /health/ready → 200. GET /metrics → the event-loop delay since the last scrape, as prom-client
// names it (perf_hooks.monitorEventLoopDelay at 10 ms, as Loopwright's /metrics measures it).
// It listens as Loopwright does (src/http/listen.ts): 8 sockets sharing the port, so that at 1,000
// streams both accept new connections equally fast.
//
// Env: PORT (0 = any; the port is printed as {"port":N} on stdout), HOST, OPENAI_BASE_URL,
// OPENAI_API_KEY, WORKSPACE_ROOT, LLM_MODEL. Exits when stdin closes (the parent went away).
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { relative, resolve } from 'node:path';

const BASE_URL = (process.env.OPENAI_BASE_URL ?? 'http://127.0.0.1:1/v1').replace(/\/+$/, '');
const API_KEY = process.env.OPENAI_API_KEY ?? 'x';
const ROOT = resolve(process.env.WORKSPACE_ROOT ?? '.');
const DEFAULT_MODEL = process.env.LLM_MODEL ?? 'bench-fast';

const SYSTEM_PROMPT = [
  'You are a minimal agent that works on the files of a project workspace.',
  'You can use these tools: read_file. Use them to look at the workspace before you answer questions about it.',
  'Be concise.',
].join('\n');

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Read a text file from the workspace, exactly as stored.',
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'File to read, relative to the workspace root.' },
          start_line: { type: 'integer', minimum: 1 },
          end_line: { type: 'integer', minimum: 1 },
        },
        required: ['path'],
        additionalProperties: false,
      },
    },
  },
];

/** Calls the model, streamed; `onText` gets every content delta as it arrives. */
async function callModel(model, messages, onText, signal) {
  const res = await fetch(`${BASE_URL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
    body: JSON.stringify({
      model,
      messages,
      tools: TOOLS,
      stream: true,
      stream_options: { include_usage: true },
    }),
    signal,
  });
  if (!res.ok || res.body === null) throw new Error(`upstream answered ${res.status}`);
  const decoder = new TextDecoder();
  let buffer = '';
  let content = '';
  let finishReason = 'stop';
  let usage = { promptTokens: 0, completionTokens: 0 };
  const calls = [];
  let finished = false;
  for await (const bytes of res.body) {
    buffer += decoder.decode(bytes, { stream: true });
    let end;
    while (!finished && (end = buffer.indexOf('\n\n')) !== -1) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of frame.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(line[5] === ' ' ? 6 : 5);
        if (data === '[DONE]') {
          finished = true;
          break;
        }
        const chunk = JSON.parse(data);
        if (chunk.usage) {
          usage = {
            promptTokens: chunk.usage.prompt_tokens,
            completionTokens: chunk.usage.completion_tokens,
          };
        }
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const delta = choice.delta ?? {};
        if (typeof delta.content === 'string' && delta.content !== '') {
          content += delta.content;
          onText(delta.content);
        }
        for (const tc of delta.tool_calls ?? []) {
          const call = (calls[tc.index ?? 0] ??= { id: '', name: '', arguments: '' });
          if (tc.id) call.id = tc.id;
          if (tc.function?.name) call.name += tc.function.name;
          if (tc.function?.arguments) call.arguments += tc.function.arguments;
        }
        if (choice.finish_reason) finishReason = choice.finish_reason;
      }
    }
  }
  return { content, calls: calls.filter(Boolean), finishReason, usage };
}

async function readFileTool(args) {
  const file = resolve(ROOT, String(args.path ?? ''));
  const rel = relative(ROOT, file);
  if (rel.startsWith('..') || rel === '') throw new Error(`${args.path}: outside the workspace`);
  return readFile(file, 'utf8');
}

async function chat(req, res, body) {
  const runId = randomUUID();
  const sessionId = randomUUID();
  const model = typeof body.model === 'string' ? body.model : DEFAULT_MODEL;
  let seq = 0;
  const send = (type, fields) => {
    seq++;
    res.write(`id: ${seq}\nevent: ${type}\ndata: ${JSON.stringify({ type, runId, seq, ...fields })}\n\n`);
  };
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  send('run_started', { sessionId, model });

  const messages = [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: body.prompt },
  ];
  const total = { promptTokens: 0, completionTokens: 0 };
  let iteration = 0;
  let status = 'max_iterations';
  try {
    while (iteration < 4) {
      iteration++;
      const step = await callModel(model, messages, (delta) => send('text', { delta }), abort.signal);
      total.promptTokens += step.usage.promptTokens;
      total.completionTokens += step.usage.completionTokens;
      const parsed = step.calls.map((c) => ({ ...c, args: JSON.parse(c.arguments || '{}') }));
      for (const c of parsed)
        send('tool_call_start', { toolCallId: c.id, name: c.name, arguments: c.args, executor: 'server' });
      send('step_finished', { iteration, finishReason: step.finishReason, usage: step.usage });
      if (parsed.length === 0) {
        messages.push({ role: 'assistant', content: step.content });
        status = 'completed';
        break;
      }
      messages.push({
        role: 'assistant',
        content: step.content === '' ? null : step.content,
        tool_calls: parsed.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: c.arguments },
        })),
      });
      for (const c of parsed) {
        const started = performance.now();
        let content;
        let isError = false;
        try {
          if (c.name !== 'read_file') throw new Error(`unknown tool ${c.name}`);
          content = await readFileTool(c.args);
        } catch (err) {
          content = err instanceof Error ? err.message : String(err);
          isError = true;
        }
        send('tool_call_result', {
          toolCallId: c.id,
          name: c.name,
          content,
          isError,
          durationMs: Math.round(performance.now() - started),
        });
        messages.push({ role: 'tool', tool_call_id: c.id, content });
      }
    }
    send('done', { sessionId, status, iterations: iteration, usage: total, messageId: randomUUID() });
  } catch (err) {
    if (!abort.signal.aborted) {
      send('error', {
        code: 'UPSTREAM_ERROR',
        message: err instanceof Error ? err.message : String(err),
        retryable: true,
      });
    }
  }
  res.end();
}

const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();

function metrics(res) {
  const seconds = (ns) => (Number.isFinite(ns) ? ns / 1e9 : 0);
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end(
    `nodejs_eventloop_lag_p99_seconds ${seconds(loopDelay.percentile(99))}\n` +
      `nodejs_eventloop_lag_max_seconds ${seconds(loopDelay.max)}\n`,
  );
  loopDelay.reset();
}

function handle(req, res) {
  if (req.method === 'GET' && req.url === '/metrics') return metrics(res);
  if (req.method === 'GET' && (req.url === '/health/ready' || req.url === '/health/live')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"ok"}');
    return;
  }
  if (req.method !== 'POST' || req.url !== '/v1/chat') {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"statusCode":404,"message":"Not Found","error":"Not Found"}');
    return;
  }
  const parts = [];
  req.on('data', (d) => parts.push(d));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      if (typeof body.prompt !== 'string' || body.prompt === '') throw new Error('prompt');
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"statusCode":400,"message":"prompt must be a non-empty string","error":"Bad Request"}');
      return;
    }
    chat(req, res, body).catch((err) => {
      console.error(err);
      res.destroy();
    });
  });
}

const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, handle);
server.listen(
  { port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1', reusePort: true },
  () => {
    const { address, port } = server.address();
    for (let i = 1; i < 8; i++) {
      const extra = createNetServer({ allowHalfOpen: true, noDelay: true }, (c) =>
        server.emit('connection', c),
      );
      extra.on('error', () => extra.close());
      extra.listen({ port, host: address, reusePort: true });
    }
    process.stdout.write(`${JSON.stringify({ port })}\n`);
  },
);
const stop = () => process.exit(0);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
