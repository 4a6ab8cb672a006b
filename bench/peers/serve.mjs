// What the three peer servers share: the HTTP server, the SSE framing, the read_file tool and the
// prompt — so that the only difference between them is the framework that runs the agent loop.
//
// POST /v1/chat {"prompt", "model"?} → text/event-stream with the events the floor sends
// (floor-server.mjs): run_started, tool_call_start, tool_call_result, step_finished, text (one per
// content delta), done {status: "completed"} — or error. GET /health/ready → 200.
//
// Env: PORT (0 = any; the port is printed as {"port":N} on stdout), HOST, OPENAI_BASE_URL,
// OPENAI_API_KEY, WORKSPACE_ROOT, LLM_MODEL. Exits when stdin closes (the parent went away).
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { relative, resolve } from 'node:path';

export const BASE_URL = (process.env.OPENAI_BASE_URL ?? 'http://127.0.0.1:1/v1').replace(/\/+$/, '');
export const API_KEY = process.env.OPENAI_API_KEY ?? 'x';
const ROOT = resolve(process.env.WORKSPACE_ROOT ?? '.');
const DEFAULT_MODEL = process.env.LLM_MODEL ?? 'bench-fast';
/** The loop's bound, as Loopwright's MAX_ITERATIONS=4 in the bench and the floor's. */
export const MAX_STEPS = 4;
const MAX_BODY_BYTES = 64 * 1024;
/** Model objects (and agents) are made once per model name; the bench uses three names. */
const MAX_MODELS = 8;

/** The floor's system prompt, word for word. */
export const SYSTEM_PROMPT = [
  'You are a minimal agent that works on the files of a project workspace.',
  'You can use these tools: read_file. Use them to look at the workspace before you answer questions about it.',
  'Be concise.',
].join('\n');
export const READ_FILE = {
  name: 'read_file',
  description: 'Read a text file from the workspace, exactly as stored.',
  pathDescription: 'File to read, relative to the workspace root.',
};

/** The read_file tool: the file under WORKSPACE_ROOT, as the floor reads it. */
export async function readWorkspaceFile(path) {
  const file = resolve(ROOT, String(path ?? ''));
  const rel = relative(ROOT, file);
  if (rel.startsWith('..') || rel === '') throw new Error(`${path}: outside the workspace`);
  return readFile(file, 'utf8');
}

/** `make(model)` once per model name (a handful at most). */
export function perModel(make) {
  const made = new Map();
  return (model) => {
    let value = made.get(model);
    if (value === undefined) {
      if (made.size >= MAX_MODELS) throw new Error(`more than ${MAX_MODELS} model names`);
      value = make(model);
      made.set(model, value);
    }
    return value;
  };
}

/**
 * Serves POST /v1/chat with `run({ prompt, model, signal, send })`, which drives the framework's
 * agent and calls `send(type, fields)` for each event; it resolves when the run has completed.
 */
export function servePeer(name, run) {
  async function chat(res, body) {
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
    try {
      const usage = await run({ prompt: body.prompt, model, signal: abort.signal, send });
      send('done', { sessionId, status: 'completed', usage, messageId: randomUUID() });
    } catch (err) {
      if (!abort.signal.aborted) {
        send('error', {
          code: 'UPSTREAM_ERROR',
          message: (err instanceof Error ? err.message : String(err)).slice(0, 500),
          retryable: true,
        });
      }
    }
    res.end();
  }

  function handle(req, res) {
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
    let size = 0;
    req.on('data', (d) => {
      size += d.length;
      if (size > MAX_BODY_BYTES) {
        res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
        res.end('{"statusCode":413,"message":"body too large","error":"Payload Too Large"}');
        req.destroy();
        return;
      }
      parts.push(d);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) return;
      let body;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8'));
        if (typeof body.prompt !== 'string' || body.prompt === '') throw new Error('prompt');
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"statusCode":400,"message":"prompt must be a non-empty string","error":"Bad Request"}');
        return;
      }
      chat(res, body).catch((err) => {
        console.error(`${name}: ${err instanceof Error ? err.stack : err}`);
        res.destroy();
      });
    });
  }

  const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, handle);
  server.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' }, () => {
    process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
  });
  const stop = () => process.exit(0);
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
