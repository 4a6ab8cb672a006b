import { Logger } from '@nestjs/common';
import { mkdirSync } from 'node:fs';
import { ConfigError, loadConfig } from './config/app-config';
import { readEnvironment } from './config/environment';
import { createApp } from './bootstrap';
import { openDatabase } from './persistence/embedded-database';

/**
 * The last line of defence: something that slips past every handler is logged (one JSON line) and
 * the server keeps serving its other users. Nothing relies on it — every write of a run has its own
 * handler — so the tests pass without it.
 */
function surviveStrayErrors(): void {
  const log = (kind: string, err: unknown) =>
    process.stderr.write(
      `${JSON.stringify({
        level: 50, // pino's "error", as every other line of the server
        time: new Date().toISOString(),
        msg: kind,
        err: err instanceof Error ? { type: err.name, message: err.message, stack: err.stack } : String(err),
      })}\n`,
    );
  process.on('unhandledRejection', (reason) => log('unhandled rejection (the server keeps serving)', reason));
  process.on('uncaughtException', (err) => log('uncaught exception (the server keeps serving)', err));
}

/** The production entry: validate the environment, open the database, serve, drain on SIGTERM. */
async function main(): Promise<void> {
  surviveStrayErrors();
  const logger = new Logger('Loopwright');
  let config;
  try {
    config = loadConfig(readEnvironment());
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Loopwright cannot start: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }

  mkdirSync(config.workspaceRoot, { recursive: true });
  const database = await openDatabase(config, (msg) => logger.log(msg));
  const app = await createApp(config, database.url);
  await app.listen({ port: config.port, host: config.host });
  logger.log(
    `listening on http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal}: draining runs, then stopping`);
    try {
      await app.close();
    } finally {
      await database.close();
      process.exit(0);
    }
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
