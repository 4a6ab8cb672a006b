import type { DestinationStream } from 'pino';

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO ',
  40: 'WARN ',
  50: 'ERROR',
  60: 'FATAL',
};

/** Fields every line has, or that the line's text already says. */
const SAID = new Set([
  'level',
  'time',
  'pid',
  'hostname',
  'msg',
  'context',
  'req',
  'res',
  'responseTime',
  'err',
]);

/**
 * One log line (pino's JSON object) as text for a person at a terminal (LOG_FORMAT=pretty, or auto
 * on a terminal): `12:00:01.234 INFO  [Runs] driving run runId=…`; a request's line says
 * `GET /v1/models 200 12ms`; an error's stack follows on its own lines. The fields are those of
 * the JSON line — nothing is logged here that the JSON line does not hold — and a line that is not
 * JSON is passed through as it is.
 */
export function logLineText(line: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (typeof record !== 'object' || record === null) return line;
  const time = typeof record.time === 'string' ? record.time.slice(11, 23) : '';
  const level = LEVELS[Number(record.level)] ?? String(record.level);
  const context = typeof record.context === 'string' ? ` [${record.context}]` : '';
  const req = record.req as { method?: string; url?: string } | undefined;
  const res = record.res as { statusCode?: number } | undefined;
  const said =
    req !== undefined && res !== undefined
      ? `${req.method} ${req.url} ${res.statusCode} ${String(record.responseTime)}ms`
      : typeof record.msg === 'string'
        ? record.msg
        : JSON.stringify(record.msg ?? '');
  const fields = Object.entries(record)
    .filter(([key]) => !SAID.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  const err = record.err as { stack?: string; message?: string } | string | undefined;
  const stack =
    err === undefined
      ? ''
      : `\n    ${(typeof err === 'string' ? err : (err.stack ?? err.message ?? '')).replace(/\n/g, '\n    ')}`;
  return `${time} ${level}${context} ${said}${fields.length > 0 ? `  ${fields.join(' ')}` : ''}${stack}`;
}

/** A pino destination writing each line as logLineText to `out`. */
export function textLogStream(out: NodeJS.WritableStream): DestinationStream {
  return {
    write(chunk: string) {
      for (const line of chunk.split('\n')) if (line !== '') out.write(`${logLineText(line)}\n`);
    },
  };
}
