import { Module } from '@nestjs/common';
import { EventStreamService } from './event-stream.service';

/** The SSE writer every event-stream endpoint answers through (runs' and the frontends'). */
@Module({
  providers: [EventStreamService],
  exports: [EventStreamService],
})
export class SseModule {}
