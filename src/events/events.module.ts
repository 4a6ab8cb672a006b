import { Module } from '@nestjs/common';
import { StoreModule } from '../store/store.module';
import { RunEventHub } from './run-event-hub.service';

/** The event log: the vocabulary, each driven run's sink, and the hub every stream follows. */
@Module({
  imports: [StoreModule],
  providers: [RunEventHub],
  exports: [RunEventHub],
})
export class EventsModule {}
