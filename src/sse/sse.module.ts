import { Module } from '@nestjs/common';
import { EventStreams } from './event-streams.service';

/** The SSE writer every event-stream endpoint answers through (runs' and the frontends'). */
@Module({
  providers: [EventStreams],
  exports: [EventStreams],
})
export class SseModule {}
