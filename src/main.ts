import { Logger } from '@nestjs/common';
import { accessSync, constants, mkdirSync } from 'node:fs';
import { ConfigError, loadConfig } from './config/app-config';
import { readEnvironment } from './config/environment';
import { createApp } from './bootstrap';
import { assertCanListen, listen } from './http/listen';
import { Draining } from './common/draining.service';
import { EmbeddedDatabaseError, openDatabase } from './persistence/embedded-database';
import { startupLog } from './observability/startup-log';
import { logsAsText } from './observability/logger-params';
import { bannerRecord, bannerText } from './observability/startup-banner';
import { checkUpstream } from './llm/upstream-check';
import { refuseUnservedModels } from './llm/served-models';
import { startupFacts, upstreamsToCheck } from './startup-facts';

/**
 * The last line of defence: something that slips past every handler is logged (one JSON line) and
 * the server keeps serving its other users. Nothing relies on it — every write of a run has its own
 * handler — so the tests pass without it.
 */
function surviveStrayErrors(): void {
  const log = (msg: string, err: unknown) =>
    startupLog('error', msg, {
      err: err instanceof Error ? { type: err.name, message: err.message, stack: err.stack } : String(err),
    });
  process.on('unhandledRejection', (reason) => log('unhandled rejection (the server keeps serving)', reason));
  process.on('uncaughtException', (err) => log('uncaught exception (the server keeps serving)', err));
}

/** Why the tools could not write in `folder` (created when missing), or null when they can. */
function unwritableFolder(folder: string): string | null {
  try {
    mkdirSync(folder, { recursive: true });
    accessSync(folder, constants.W_OK);
    return null;
  } catch (err) {
    const uid = process.getuid?.();
    return `${folder} is not a folder this process${uid === undefined ? '' : ` (uid ${uid})`} can write in (${(err as NodeJS.ErrnoException).code ?? String(err)}): give it that user, e.g. chown ${uid ?? '<uid>'} ${folder}`;
  }
}

/** The production entry: validate the environment, open the database, serve, drain on SIGTERM. */
async function main(): Promise<void> {
  surviveStrayErrors();
  let config;
  try {
    config = loadConfig(readEnvironment());
    refuseUnservedModels(config);
  } catch (err) {
    if (err instanceof ConfigError) {
      startupLog('error', `Loopwright cannot start: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }

  const workspaceProblem = unwritableFolder(config.workspaceRoot);
  if (workspaceProblem !== null) {
    startupLog('error', `Loopwright cannot start: WORKSPACE_ROOT ${workspaceProblem}`);
    process.exit(1);
  }
  // A person at a terminal gets text; a collector gets JSON lines (LOG_FORMAT decides when set).
  const pretty = logsAsText(config);
  const cannotListen = (err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES') return false;
    const where = `PORT=${config.port} on HOST=${config.host}`;
    const message =
      code === 'EADDRINUSE'
        ? `Loopwright cannot start: ${where} is already in use (another Loopwright?). Stop that process or set PORT to a free port.`
        : `Loopwright cannot start: this user may not listen on ${where}. Set PORT above 1023.`;
    if (pretty) process.stderr.write(`${message}\n`);
    else startupLog('error', message);
    return true;
  };
  // Before the database and the application start: a port in use is one line, nothing to undo.
  await assertCanListen(config.port, config.host).catch((err: unknown) => {
    if (cannotListen(err)) process.exit(1);
    throw err;
  });
  const database = await openDatabase(config, startupLog);
  const app = await createApp(config, database.url);
  try {
    await listen(app, config.port, config.host);
  } catch (err) {
    // Taken in the meantime.
    if (!cannotListen(err)) throw err;
    await app.close();
    await database.close();
    process.exit(1);
  }
  const logger = new Logger('Loopwright');
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  const facts = startupFacts(app, config, url);
  if (pretty) process.stdout.write(`${bannerText(facts)}\n`);
  else logger.log({ ...bannerRecord(facts), msg: `listening on ${url}` });
  for (const upstream of upstreamsToCheck(config)) {
    void checkUpstream(upstream).then((problem) => {
      if (problem === null) return;
      if (pretty) process.stdout.write(`Warning: ${problem}\n`);
      else logger.warn(problem);
    });
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // From this moment no run starts and readiness says 503; running runs get SHUTDOWN_GRACE_MS.
    app.get(Draining).start();
    logger.log(`${signal}: draining runs, then stopping`);
    try {
      await app.close();
    } finally {
      // The embedded PostgreSQL goes last, once every run has stored its end.
      await database.close();
      startupLog('info', 'stopped');
      process.exit(0);
    }
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  if (err instanceof EmbeddedDatabaseError) startupLog('error', `Loopwright cannot start: ${err.message}`);
  else
    startupLog('error', 'Loopwright cannot start', { err: err instanceof Error ? err.stack : String(err) });
  process.exit(1);
});
