import { Module } from '@nestjs/common';
import { ConversationStore } from './conversation-store.service';
import { FileStore } from './file-store.service';
import { IdempotencyStore } from './idempotency-store.service';
import { RunStartStore } from './run-start-store.service';
import { RunJournal } from './run-journal';
import { RunStore } from './run-store.service';
import { SessionStore } from './session-store.service';
import { UsageStore } from './usage-store.service';

/** Every SQL statement of the durable core: one store per aggregate, nothing else writes SQL. */
@Module({
  providers: [
    RunStore,
    RunJournal,
    RunStartStore,
    ConversationStore,
    SessionStore,
    IdempotencyStore,
    UsageStore,
    FileStore,
  ],
  exports: [
    RunStore,
    RunJournal,
    RunStartStore,
    ConversationStore,
    SessionStore,
    IdempotencyStore,
    UsageStore,
    FileStore,
  ],
})
export class StoreModule {}
