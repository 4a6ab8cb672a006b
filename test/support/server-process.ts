import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

export interface ServerProcess {
  url: string;
  pid: number;
  /** What the process wrote, for diagnosing a failed test. */
  output(): string;
  kill(signal: NodeJS.Signals): Promise<number | null>;
}

const MAIN = resolve(__dirname, '../../dist/main.js');

/** The production entry (`node dist/main.js`, built by `npm test`) as a separate process. */
export async function spawnServer(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  let out = '';
  const child: ChildProcess = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      LOG_LEVEL: 'warn',
      OPENAI_API_KEY: 'test-key',
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited during start-up:\n${out}`);
    const ok = await fetch(`${url}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not become ready:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    pid: child.pid!,
    output: () => out,
    async kill(signal) {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * The ports spawned servers listen on: below the kernel's ephemeral range (32768–60999 on Linux),
 * where no `listen(0)` or outgoing connection lands, and a range of their own for each Jest worker
 * (twenty ranges: 20000–29999).
 * A port picked with `listen(0)` and closed again could be handed to another worker's server before
 * this child listened on it: the child then exited, and this test talked to that server.
 */
const FIRST_PORT = 20_000;
const PORTS_PER_WORKER = 500;
let nextPort = 0;

async function freePort(): Promise<number> {
  const first = FIRST_PORT + ((Number(process.env.JEST_WORKER_ID ?? '1') - 1) % 20) * PORTS_PER_WORKER;
  for (let tries = 0; tries < PORTS_PER_WORKER; tries++) {
    const port = first + (nextPort++ % PORTS_PER_WORKER);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${first}–${first + PORTS_PER_WORKER - 1}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((done) => {
    const srv = createServer();
    srv.once('error', () => done(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => done(true)));
  });
}
