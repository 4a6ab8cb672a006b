import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestMethod } from '@nestjs/common';
import type { Params } from 'nestjs-pino';
import { stdTimeFunctions } from 'pino';
import type { AppConfig } from '../config/app-config';
import { scrubSecrets } from '../config/secret-variables';
import { textLogStream } from './log-text';

// Stream tokens ride in the query string (EventSource sends no headers): they never reach a log.
const QUERY_SECRET = /([?&]token=)[^&#]*/gi;

/** The URL with the value of every `token` query parameter replaced. */
export function redactQuerySecrets(url: string): string {
  return url.replace(QUERY_SECRET, '$1[redacted]');
}

// Probes and scrapes arrive every few seconds; a line for each would drown the rest.
const QUIET_PATHS = /^\/(health(\/|$|\?)|metrics($|\?))/;

/** Whether logs are text for a person (LOG_FORMAT=pretty, or auto with stdout a terminal) or JSON lines. */
export function logsAsText(config: Pick<AppConfig, 'logFormat'>): boolean {
  return config.logFormat === 'pretty' || (config.logFormat === 'auto' && process.stdout.isTTY === true);
}

/**
 * Structured logs, JSON lines (or the same lines as text when `asText`, see logsAsText): one line
 * per request (method, url, status, time), each later line of the request carrying its `requestId`
 * (Fastify's request id, see requestIdFor). Headers are not logged (credentials live there) and
 * neither are bodies (prompts); the redaction below is a second line of defence for code that logs
 * headers, and every configured secret value is replaced in whatever line is written.
 */
export function loggerParams(
  config: Pick<AppConfig, 'logLevel'> & Partial<Pick<AppConfig, 'secretValues'>>,
  asText = false,
): Params {
  const secrets = config.secretValues ?? [];
  const params = {
    // nestjs-pino's default route, `{/*splat}`, gets a leading slash from Nest 12 and then matches
    // nothing but `/`: every path is named explicitly.
    forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
    pinoHttp: {
      level: config.logLevel,
      timestamp: stdTimeFunctions.isoTime,
      // The last line of defence: a configured secret in a line some code logs (an MCP server's
      // stderr, an error that quotes a request) is replaced before the line is written.
      hooks: { streamWrite: (line: string) => scrubSecrets(line, secrets) },
      customAttributeKeys: { reqId: 'requestId' },
      quietReqLogger: true,
      // Behind Nest's middleware layer `url` may be cut to the part after the route's prefix.
      autoLogging: {
        ignore: (req: IncomingMessage) =>
          QUIET_PATHS.test((req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? ''),
      },
      customLogLevel: (_req: IncomingMessage, res: ServerResponse, err?: Error) =>
        err !== undefined || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
      serializers: {
        req: (req: { id: unknown; method: string; url: string; remoteAddress?: string }) => ({
          id: req.id,
          method: req.method,
          url: redactQuerySecrets(req.url),
          remoteAddress: req.remoteAddress,
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'req.headers["proxy-authorization"]',
          'res.headers["set-cookie"]',
          '*.headers.authorization',
          '*.headers.Authorization',
          '*.headers.cookie',
          'headers.authorization',
          'headers.cookie',
        ],
        censor: '[redacted]',
      },
    },
  } satisfies Params;
  return asText ? { ...params, pinoHttp: [params.pinoHttp, textLogStream(process.stdout)] } : params;
}
