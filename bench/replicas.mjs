// What the soaks share: Loopwright replicas as child processes (each stopped on exit by the script
// that started it, through `children`), the SSE reader their clients follow runs with, and a percentile.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER_ENTRY = join(resolve(fileURLToPath(new URL('.', import.meta.url)), '..'), 'dist', 'main.js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export const percentile = (values, p) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

export function freePort() {
  return new Promise((done, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => done(port));
    });
  });
}

/** Every child process started here and still running: the script kills them on exit. */
export const children = new Set();

export function spawnTracked(args, env) {
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'], env });
  let output = '';
  const keep = (d) => (output = (output + d.toString()).slice(-8000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((done) => child.once('exit', done));
  children.add(child);
  void exited.then(() => children.delete(child));
  return { child, exited, output: () => output };
}

/** Starts replica `name` of dist/main.js (a fresh process on a fresh port) and waits until it is ready. */
export async function startReplica(name, env) {
  const port = await freePort();
  const proc = spawnTracked([SERVER_ENTRY], {
    PATH: process.env.PATH,
    HOME: process.env.HOME ?? tmpdir(),
    ...env,
    PORT: String(port),
    HOST: '127.0.0.1',
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`${name} exited during start-up:\n${proc.output()}`);
    const ok = await fetch(`${url}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { name, url, ...proc };
    if (Date.now() > deadline) throw new Error(`${name} not ready:\n${proc.output()}`);
    await sleep(50);
  }
}

/** Reads a run's SSE stream, `onEvent` for each event, no event over `maxChars` held. */
export async function readEvents(res, onEvent, maxChars = Infinity) {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk, { stream: true });
    if (buffer.length > maxChars) throw new Error('an SSE event over the bound');
    let sep;
    while ((sep = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, sep);
      buffer = buffer.slice(sep + 2);
      const fields = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
      }
      if (fields.data === undefined) continue;
      onEvent({ id: Number(fields.id), event: fields.event, data: JSON.parse(fields.data) });
    }
  }
}
