import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../../src/bootstrap';
import { listen } from '../../src/http/listen';
import { loadConfig, type AppConfig } from '../../src/config/app-config';
import { createTestDatabase } from './database';

export interface TestApp {
  /** http://127.0.0.1:<port> */
  url: string;
  app: NestFastifyApplication;
  config: AppConfig;
  databaseUrl: string;
  workspace: string;
  close(): Promise<void>;
}

/**
 * The real application over real HTTP on a fresh database of the test PostgreSQL. `env` is what the
 * server's environment would hold (strings, validated by the real config loader).
 */
export async function startApp(env: Record<string, string> = {}, databaseUrl?: string): Promise<TestApp> {
  const workspace = env.WORKSPACE_ROOT ?? mkdtempSync(join(tmpdir(), 'loopwright-ws-'));
  const dbUrl = databaseUrl ?? (await createTestDatabase());
  const config = loadConfig({
    OPENAI_API_KEY: 'test-key',
    LOG_LEVEL: 'silent',
    PORT: '0',
    ...env,
    WORKSPACE_ROOT: workspace,
    DATABASE_URL: dbUrl,
  });
  const app = await createApp(config, dbUrl);
  await listen(app, 0, '127.0.0.1');
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    config,
    databaseUrl: dbUrl,
    workspace,
    close: () => app.close(),
  };
}
