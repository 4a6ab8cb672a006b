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

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => done(port));
    });
  });
}
