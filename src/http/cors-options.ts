import type { FastifyCorsOptions } from '@fastify/cors';
import type { AppConfig } from '../config/app-config';

/** CORS for the configured origins; null (no CORS headers at all) when none are configured. */
export function corsOptions(config: Pick<AppConfig, 'corsOrigins'>): FastifyCorsOptions | null {
  if (config.corsOrigins.length === 0) return null;
  return {
    origin: config.corsOrigins.includes('*') ? '*' : [...config.corsOrigins],
    methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    allowedHeaders: [
      'Authorization',
      'Content-Type',
      'Last-Event-ID',
      'Idempotency-Key',
      'X-Request-Id',
      'X-End-User',
    ],
    // A streaming answer names its run and session in headers; browser code may read them.
    exposedHeaders: ['X-Run-Id', 'X-Session-Id', 'X-Request-Id', 'Retry-After'],
    // Bearer keys travel in a header, never in cookies: browsers need not send credentials.
    credentials: false,
    maxAge: 600,
  };
}
