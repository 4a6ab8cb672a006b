import { Logger } from '@nestjs/common';
import { mkdirSync } from 'node:fs';
import { ConfigError, loadConfig } from './config/app-config';
import { readEnvironment } from './config/environment';
import { createApp } from './bootstrap';
import { openDatabase } from './persistence/embedded-database';

/** The production entry: validate the environment, open the database, serve, drain on SIGTERM. */
async function main(): Promise<void> {
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
