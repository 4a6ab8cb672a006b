import { Module } from '@nestjs/common';
import { ConversationStore } from './conversation-store.service';
import { RunStore } from './run-store.service';
import { SessionStore } from './session-store.service';

/** Every SQL statement of the durable core: one store per aggregate, nothing else writes SQL. */
@Module({
  providers: [RunStore, ConversationStore, SessionStore],
  exports: [RunStore, ConversationStore, SessionStore],
})
export class StoreModule {}
