// A fast fake OpenAI Chat Completions upstream for the benchmark (plain node:http, no dependencies).
//
// POST /v1/chat/completions, always streamed. It decides from the request body:
//   - last message has role "tool"  → the answer: 200 text deltas (1000 for a model whose name
//     contains "long": a run of about 10 s in the delay mode), finish_reason "stop" — unless the tool
//     message lacks the input file's first line, then the answer is TOOL_RESULT_MISSING (the load
//     client compares the exact answer text, so a tool result that never reached the model fails);
//   - otherwise                     → one tool call, its arguments in 5 deltas, finish_reason "tool_calls":
//       read_file {"path":"bench-input.txt"}, or write_file {"path":"out-<n>.txt","content":"x"}
//       when the model name contains "approve" (the approval scenario).
// A model name containing "delay" is answered like a model: 100 ms before the first chunk, then
// 10 ms between chunks (paced against the clock, so timer lateness does not add up). Any other
// model is answered at once, in one write.
// A usage chunk (choices: []) is sent when stream_options.include_usage is true.
// GET /stats → {"calls":N}: requests answered so far (the bench checks two per completed run).
//
// Started by bench/run.mjs as a child process: prints {"port":N} on stdout once listening, exits
// when its stdin closes (the parent went away) or on SIGTERM.
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const INPUT_FILE = 'bench-input.txt';
export const ANSWER_DELTAS = 200;
export const LONG_ANSWER_DELTAS = 1000;
/** The first line of the input file: the tool result must carry it to the model. */
export const INPUT_MARKER = 'line 1: the benchmark reads this file through read_file on every run.';
const FIRST_DELAY_MS = 100;
const CHUNK_DELAY_MS = 10;

const CREATED = 1_700_000_000;
const HEAD = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":${CREATED},"model":"bench","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":`;
const chunk = (delta, finish = null) =>
  `${HEAD}${JSON.stringify(delta)},"logprobs":null,"finish_reason":${JSON.stringify(finish)}}]}\n\n`;
const usage = (prompt, completion) =>
  `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":${CREATED},"model":"bench","system_fingerprint":"fp_bench","choices":[],"usage":{"prompt_tokens":${prompt},"completion_tokens":${completion},"total_tokens":${prompt + completion}}}\n\n`;
const DONE = 'data: [DONE]\n\n';

const WORDS =
  'the quick brown fox jumps over a lazy dog while seven wizards quietly box jaded zebras near old mills'.split(
    ' ',
  );

/** Splits `text` into `n` pieces of about equal length. */
function split(text, n) {
  const size = Math.ceil(text.length / n);
  const parts = [];
  for (let at = 0; at < text.length; at += size) parts.push(text.slice(at, at + size));
  return parts;
}

const wordsOf = (deltas) =>
  Array.from({ length: deltas }, (_, i) => (i === 0 ? '' : ' ') + WORDS[i % WORDS.length]);
/** The exact answer of `deltas` text deltas, as a client assembles it. */
export const answerText = (deltas) => wordsOf(deltas).join('');

// ---- the answers, all pre-serialised ----
function answer(words) {
  const chunks = words.map((word, i) =>
    chunk(i === 0 ? { role: 'assistant', content: word } : { content: word }),
  );
  chunks.push(chunk({}, 'stop'));
  const tail = usage(400, words.length);
  return { chunks, usage: tail, noUsage: chunks.join('') + DONE, withUsage: chunks.join('') + tail + DONE };
}
const SHORT = answer(wordsOf(ANSWER_DELTAS));
const LONG = answer(wordsOf(LONG_ANSWER_DELTAS));
const MISSING = answer(['TOOL_RESULT_MISSING']);

// ---- the tool call: a header chunk (id, name, arguments "") then 5 argument deltas ----
// The header is pre-serialised around the call id, which is new for every answer.
function toolChunks(callId, name, args) {
  const header = chunk({
    role: 'assistant',
    content: null,
    tool_calls: [{ index: 0, id: callId, type: 'function', function: { name, arguments: '' } }],
  });
  const out = [header];
  for (const piece of split(args, 5))
    out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
  out.push(chunk({}, 'tool_calls'));
  return out;
}
// read_file: the argument deltas never change, only the id in the header does.
const READ_ARGS = JSON.stringify({ path: INPUT_FILE });
const READ_REST = toolChunks('ID', 'read_file', READ_ARGS).slice(1).join('');
const READ_HEAD_A = HEAD + '{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":';
const READ_HEAD_B =
  ',"type":"function","function":{"name":"read_file","arguments":""}}]},"logprobs":null,"finish_reason":null}]}\n\n';
if (READ_HEAD_A + '"ID"' + READ_HEAD_B !== toolChunks('ID', 'read_file', READ_ARGS)[0]) {
  throw new Error('fake-upstream: pre-serialised read_file header does not match');
}
const TOOL_USAGE = usage(300, 20);

let toolCalls = 0;
let requests = 0;
const tag = process.pid.toString(36);
let writes = 0;

function answerChunks(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages[messages.length - 1];
  const withUsage = body.stream_options?.include_usage === true;
  const model = typeof body.model === 'string' ? body.model : '';
  if (last?.role === 'tool') {
    const reached =
      typeof last.content === 'string' && (model.includes('approve') || last.content.includes(INPUT_MARKER));
    const a = !reached ? MISSING : model.includes('long') ? LONG : SHORT;
    return {
      chunks: a.chunks,
      tail: withUsage ? [a.usage, DONE] : [DONE],
      joined: withUsage ? a.withUsage : a.noUsage,
    };
  }
  const callId = `call_${tag}_${++toolCalls}`;
  let chunks;
  if (model.includes('approve')) {
    chunks = toolChunks(
      callId,
      'write_file',
      JSON.stringify({ path: `out-${tag}-${++writes}.txt`, content: 'x' }),
    );
  } else {
    chunks = [READ_HEAD_A + JSON.stringify(callId) + READ_HEAD_B, READ_REST];
  }
  const tail = withUsage ? [TOOL_USAGE, DONE] : [DONE];
  return { chunks, tail, joined: chunks.join('') + tail.join('') };
}

/** For the delay mode: every chunk on its own (READ_REST is 6 chunks in one string). */
function separate(chunks) {
  const out = [];
  for (const c of chunks) {
    let at = 0;
    while (at < c.length) {
      const end = c.indexOf('\n\n', at) + 2;
      out.push(c.slice(at, end));
      at = end;
    }
  }
  return out;
}

function handle(req, res) {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ calls: requests }));
    return;
  }
  if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"not found","type":"invalid_request_error"}}');
    return;
  }
  const parts = [];
  req.on('data', (d) => parts.push(d));
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
    const answer = answerChunks(body);
    const delayed = typeof body.model === 'string' && body.model.includes('delay');
    if (!delayed) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(answer.joined);
      return;
    }
    const frames = separate(answer.chunks);
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
    const next = () => {
      if (gone) return;
      if (i === frames.length - 1) {
        // The last content chunk goes out with the usage chunk and [DONE].
        res.end(frames[i] + answer.tail.join(''));
        return;
      }
      res.write(frames[i]);
      i++;
      timer = setTimeout(next, Math.max(0, start + FIRST_DELAY_MS + i * CHUNK_DELAY_MS - performance.now()));
    };
    timer = setTimeout(next, FIRST_DELAY_MS);
  });
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, handle);
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
  });
  const stop = () => process.exit(0);
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
