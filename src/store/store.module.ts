import { Module } from '@nestjs/common';
import { BackgroundCommandStore } from './background-command-store.service';
import { BudgetStore } from './budget-store.service';
import { ConversationStore } from './conversation-store.service';
import { ForkStore } from './fork-store.service';
import { RecordedRunStore } from './recorded-run-store.service';
import { FileStore } from './file-store.service';
import { IdempotencyStore } from './idempotency-store.service';
import { RunStartStore } from './run-start-store.service';
import { QueuedRunStore } from './queued-run-store.service';
import { RunJournal } from './run-journal.service';
import { ScheduleStore } from './schedule-store.service';
import { RunStore } from './run-store.service';
import { SessionStore } from './session-store.service';
import { UsageStore } from './usage-store.service';
import { WebhookStore } from './webhook-store.service';

/** One store per aggregate (and the run's journal): every one is provided and exported. */
const STORES = [
  RunStore,
  RunJournal,
  RunStartStore,
  ConversationStore,
  SessionStore,
  IdempotencyStore,
  UsageStore,
  BackgroundCommandStore,
  WebhookStore,
  QueuedRunStore,
  ScheduleStore,
  BudgetStore,
  ForkStore,
  RecordedRunStore,
  FileStore,
];

/** Every SQL statement of the durable core: one store per aggregate, nothing else writes SQL. */
@Module({ providers: STORES, exports: STORES })
export class StoreModule {}
