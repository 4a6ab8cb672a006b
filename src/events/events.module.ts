import { Module } from '@nestjs/common';
import { StoreModule } from '../store/store.module';
import { RunEventHub } from './run-event-hub.service';
import { STREAM_WAKES_PER_TICK } from '../common/tuning';
import { StreamWakes } from './stream-wakes';

/**
 * The event log: the vocabulary, each driven run's sink, the hub every stream follows, and
 * StreamWakes, the one queue every sink's stream wakes go through.
 */
@Module({
  imports: [StoreModule],
  providers: [
    RunEventHub,
    { provide: StreamWakes, useFactory: () => new StreamWakes(STREAM_WAKES_PER_TICK) },
  ],
  exports: [RunEventHub, StreamWakes],
})
export class EventsModule {}
