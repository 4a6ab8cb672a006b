/**
 * Log lines of the start and the end of the process, before the application (and its pino logger)
 * exists or after it is gone: the same one-JSON-object-per-line shape as every other line, so a log
 * collector never meets a coloured console line.
 */
export type StartupLog = (
  level: 'info' | 'warn' | 'error',
  msg: string,
  fields?: Record<string, unknown>,
) => void;

const LEVELS = { info: 30, warn: 40, error: 50 } as const;

export const startupLog: StartupLog = (level, msg, fields = {}) => {
  process.stderr.write(
    `${JSON.stringify({ level: LEVELS[level], time: new Date().toISOString(), pid: process.pid, context: 'Loopwright', ...fields, msg })}\n`,
  );
};
