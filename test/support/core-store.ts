import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config/app-config';
import { serializeEvent, type SerializedEvent } from '../../src/events/run-events';
import { dataSourceOptions } from '../../src/persistence/data-source-options';
import { runMigrationsLocked } from '../../src/persistence/migrate';
import { ConversationStore } from '../../src/store/conversation-store.service';
import { RunStartStore } from '../../src/store/run-start-store.service';
import { RunStore } from '../../src/store/run-store.service';
import { SessionStore } from '../../src/store/session-store.service';
import { createTestDatabase } from './database';

/** The stores on a real, migrated database (as the app migrates it), without the rest of the app. */
export interface CoreStore {
  db: DataSource;
  url: string;
  runs: RunStore;
  starts: RunStartStore;
  conversation: ConversationStore;
  sessions: SessionStore;
  close(): Promise<void>;
}

export async function openCoreStore(url?: string, runLeaseMs = 30_000): Promise<CoreStore> {
  const databaseUrl = url ?? (await createTestDatabase());
  const db = await new DataSource(dataSourceOptions(databaseUrl, 4)).initialize();
  await runMigrationsLocked(db);
  const config = loadConfig({ OPENAI_API_KEY: 'k', RUN_LEASE_MS: String(runLeaseMs) });
  return {
    db,
    url: databaseUrl,
    runs: new RunStore(db, config),
    starts: new RunStartStore(config),
    conversation: new ConversationStore(db),
    sessions: new SessionStore(db),
    close: () => db.destroy(),
  };
}

/** A session with one running run leased to `leaseOwner`, as Runs.start leaves it. */
export async function insertRunningRun(
  store: CoreStore,
  leaseOwner: string,
): Promise<{ runId: string; sessionId: string; userSeq: number; firstEvent: SerializedEvent }> {
  const sessionId = randomUUID();
  const runId = randomUUID();
  await store.sessions.insert(
    store.db.manager,
    {
      id: sessionId,
      owner: 'tester',
      title: 't',
      systemPrompt: null,
      model: 'm',
      mode: 'safe',
      tools: null,
      clientTools: [],
      maxIterations: null,
      maxTokens: null,
      maxCostUsd: null,
      endUser: null,
    },
    'You are a test.',
  );
  const firstEvent = serializeEvent(runId, 1, { type: 'run_started', sessionId, model: 'm' });
  const started = await store.starts.start(
    store.db.manager,
    {
      run: {
        id: runId,
        sessionId,
        owner: 'tester',
        model: 'm',
        maxIterations: 5,
        leaseOwner,
        traceParent: null,
        responseFormat: null,
      },
      firstEvent,
      answers: { kind: 'prompt', prompt: { id: randomUUID(), content: 'hello' } },
    },
    0,
  );
  if (!started.admitted || started.promptSeq === null) throw new Error('the run was not stored');
  const userSeq = started.promptSeq;
  return { runId, sessionId, userSeq, firstEvent };
}

/** The run's stored events as (seq, type, data). */
export async function storedEvents(
  store: CoreStore,
  runId: string,
): Promise<{ seq: number; type: string; data: string }[]> {
  return store.runs.eventsAfter(runId, 0, 100_000);
}
