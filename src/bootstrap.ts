import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import type { AppConfig } from './config/app-config';
import { RUN_EVENT_SCHEMAS } from './events/run-event-schemas';
import { configureHttp } from './http/configure-http';

/**
 * Builds the application for a validated config and a reachable database URL. Used by main.ts and by
 * the end-to-end tests, so both run the very same HTTP stack.
 */
export async function createApp(config: AppConfig, databaseUrl: string): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: config.bodyLimitBytes,
    // Fastify answers 414 to a path parameter longer than this (default 100) before any validation.
    // Ids reach 200 characters (chat ids), and an over-long one must meet the route's own 400/404:
    // Node's 16 KiB header limit already bounds the request line, and no route has a regular
    // expression parameter (what the limit protects), so it is set past anything that can arrive.
    routerOptions: { maxParamLength: 16 * 1024 },
    trustProxy: false,
    return503OnClosing: true,
    forceCloseConnections: true,
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, databaseUrl),
    adapter,
    {
      bufferLogs: true,
      // configureHttp installs the one body parser there is (JSON).
      bodyParser: false,
    },
  );
  await configureHttp(app, config, RUN_EVENT_SCHEMAS);
  await app.init();
  return app;
}
