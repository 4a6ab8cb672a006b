// The chaos soak's scripted model: a plain node:http Chat Completions server (streamed, usage chunk
// included) that drives every run through the same steps, paced like a model (100 ms to the first
// chunk, 10 ms between chunks):
//   1. read_file  {"path":"bench-input.txt"}
//   2. write_file {"path":"chaos/<run>-<request>.txt","content":"written by <call id>\nEND\n"}
//   3. edit_file  on that file: "END\n" → "edited by <call id>\nEND\n" (TOOL_POLICY makes it wait for an approval)
//   4. client_note {"note":"<run>"} — a client tool: the bench's client posts its result
//   5. the answer: ANSWER_DELTAS text deltas, finish_reason "stop".
// A step counts as done once the conversation holds a result for one of its calls that is not the
// take-over's INTERRUPTED result; an interrupted write is asked for again (a new call, a new file), as a
// model would. Every write names a file no other call names, and every edit adds a line naming its
// call: a write or edit executed twice shows in the workspace (bench/chaos.mjs counts them).
//
// The run is named by the prompt ("chaos run <n>"). GET /stats → {"requests":N,"perRun":{"<n>":{"<step>":count}}}.
// Started by bench/chaos.mjs as a child: prints {"port":N} once listening, exits when its stdin closes.
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { INPUT_FILE, INPUT_MARKER } from './fake-upstream.mjs';

export const ANSWER_DELTAS = 300;
export const CLIENT_TOOL = 'client_note';
export const INTERRUPTED_MARK = 'the server stopped while this ran';
const FIRST_DELAY_MS = 100;
const CHUNK_DELAY_MS = 10;
const BODY_LIMIT = 8 * 1024 * 1024;

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-chaos', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'chaos', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
const usage = (prompt, completion) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-chaos', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'chaos', choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } })}\n\n`;

const WORDS = 'the quick brown fox jumps over a lazy dog while seven wizards box jaded zebras'.split(' ');

let requests = 0;
const perRun = new Map();
const tag = process.pid.toString(36);

/** The id of the call this request answers with (one call per request). */
const callId = () => `call_${tag}_${requests}`;

function toolCall(name, args) {
  const id = callId();
  const json = JSON.stringify(args);
  const size = Math.ceil(json.length / 5);
  const frames = [
    chunk({
      role: 'assistant',
      content: null,
      tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }],
    }),
  ];
  for (let at = 0; at < json.length; at += size)
    frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: json.slice(at, at + size) } }] }));
  frames.push(chunk({}, 'tool_calls'));
  return { id, frames };
}

/** The next step of a run, from its conversation as the server sent it. */
function script(messages) {
  const results = new Map();
  for (const m of messages)
    if (m.role === 'tool') results.set(m.tool_call_id, typeof m.content === 'string' ? m.content : '');
  const done = new Map(); // tool name → the arguments of its call that has a real result
  for (const m of messages) {
    for (const c of m.role === 'assistant' && Array.isArray(m.tool_calls) ? m.tool_calls : []) {
      const result = results.get(c.id);
      if (result === undefined || result.includes(INTERRUPTED_MARK)) continue;
      let args = {};
      try {
        args = JSON.parse(c.function.arguments);
      } catch {
        // not ours
      }
      done.set(c.function.name, { args, result });
    }
  }
  const run =
    /chaos run (\d+)/.exec(messages.find((m) => m.role === 'user')?.content ?? '')?.[1] ?? 'unknown';
  if (!done.has('read_file'))
    return { run, step: 'read_file', ...toolCall('read_file', { path: INPUT_FILE }) };
  if (!done.get('read_file').result.includes(INPUT_MARKER))
    return { run, step: 'answer', ...text(['TOOL_RESULT_MISSING']) };
  if (!done.has('write_file')) {
    const args = { path: `chaos/${run}-${requests}.txt`, content: `written by ${callId()}\nEND\n` };
    return { run, step: 'write_file', ...toolCall('write_file', args) };
  }
  if (!done.has('edit_file')) {
    const path = done.get('write_file').args.path;
    const edit = { path, old_text: 'END\n', new_text: `edited by ${callId()}\nEND\n` };
    return { run, step: 'edit_file', ...toolCall('edit_file', edit) };
  }
  if (!done.has(CLIENT_TOOL)) return { run, step: CLIENT_TOOL, ...toolCall(CLIENT_TOOL, { note: run }) };
  return {
    run,
    step: 'answer',
    ...text(Array.from({ length: ANSWER_DELTAS }, (_, i) => (i === 0 ? '' : ' ') + WORDS[i % WORDS.length])),
  };
}

function text(words) {
  const frames = words.map((w, i) => chunk(i === 0 ? { role: 'assistant', content: w } : { content: w }));
  frames.push(chunk({}, 'stop'));
  return { frames };
}

function handle(req, res) {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ requests, perRun: Object.fromEntries(perRun) }));
    return;
  }
  if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"not found","type":"invalid_request_error"}}');
    return;
  }
  const parts = [];
  let size = 0;
  req.on('data', (d) => {
    size += d.length;
    if (size > BODY_LIMIT) req.destroy();
    else parts.push(d);
  });
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"bad json","type":"invalid_request_error"}}');
      return;
    }
    requests++;
    const next = script(Array.isArray(body.messages) ? body.messages : []);
    const steps = perRun.get(next.run) ?? {};
    steps[next.step] = (steps[next.step] ?? 0) + 1;
    perRun.set(next.run, steps);
    const tail = (body.stream_options?.include_usage === true ? usage(400, 20) : '') + 'data: [DONE]\n\n';
    const frames = next.frames;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    const start = performance.now();
    let i = 0;
    let timer;
    let gone = false;
    res.on('close', () => {
      gone = true;
      clearTimeout(timer);
    });
    const send = () => {
      if (gone) return;
      if (i === frames.length - 1) {
        res.end(frames[i] + tail);
        return;
      }
      res.write(frames[i]);
      i++;
      timer = setTimeout(send, Math.max(0, start + FIRST_DELAY_MS + i * CHUNK_DELAY_MS - performance.now()));
    };
    timer = setTimeout(send, FIRST_DELAY_MS);
  });
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, handle);
  server.listen(0, '127.0.0.1', () =>
    process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`),
  );
  const stop = () => process.exit(0);
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
