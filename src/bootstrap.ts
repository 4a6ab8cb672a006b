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
