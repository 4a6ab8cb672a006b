import { Test, type TestingModule } from '@nestjs/testing';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppModule } from '../../src/app.module';
import { loadConfig } from '../../src/config/app-config';
import { RunEventHub } from '../../src/events/run-event-hub.service';
import type { SerializedEvent } from '../../src/events/run-events';
import { MODEL_PROVIDER } from '../../src/llm/model-provider';
import { Runs } from '../../src/runs/runs.service';
import { createTestDatabase } from './database';
import { ScriptedModel } from './scripted-model';

/**
 * The whole application's providers on a fresh database, with the model replaced by a ScriptedModel
 * (the ModelProvider seam; no HTTP anywhere): the durable core driven directly.
 */
export interface CoreApp {
  module: TestingModule;
  model: ScriptedModel;
  runs: Runs;
  hub: RunEventHub;
  databaseUrl: string;
  workspace: string;
  /** Events of the run as a stream of this process sees them, until `stop` says so or the stream ends. */
  follow(runId: string, stop?: (e: SerializedEvent) => boolean): Promise<SerializedEvent[]>;
  close(): Promise<void>;
}

export async function startCore(env: Record<string, string> = {}, databaseUrl?: string): Promise<CoreApp> {
  const url = databaseUrl ?? (await createTestDatabase());
  const workspace = env.WORKSPACE_ROOT ?? mkdtempSync(join(tmpdir(), 'loopwright-core-'));
  const config = loadConfig({
    OPENAI_API_KEY: 'k',
    LOG_LEVEL: 'silent',
    ...env,
    WORKSPACE_ROOT: workspace,
    DATABASE_URL: url,
  });
  const model = new ScriptedModel();
  const module = await Test.createTestingModule({ imports: [AppModule.forRoot(config, url)] })
    .overrideProvider(MODEL_PROVIDER)
    .useValue(model)
    .compile();
  module.useLogger(false);
  await module.init();
  const hub = module.get(RunEventHub);
  return {
    module,
    model,
    runs: module.get(Runs),
    hub,
    databaseUrl: url,
    workspace,
    async follow(runId, stop) {
      const seen: SerializedEvent[] = [];
      const controller = new AbortController();
      try {
        for await (const batch of hub.follow(runId, 0, controller.signal)) {
          for (const e of batch as SerializedEvent[]) {
            seen.push(e);
            if (stop?.(e)) return seen;
          }
        }
        return seen;
      } finally {
        controller.abort();
      }
    },
    close: () => module.close(),
  };
}
