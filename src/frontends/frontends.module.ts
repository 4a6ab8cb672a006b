import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { RunsModule } from '../runs/runs.module';
import { SessionsModule } from '../sessions/sessions.module';
import { SseModule } from '../sse/sse.module';
import { StoreModule } from '../store/store.module';
import { AgUiController } from './ag-ui/ag-ui.controller';
import { AgUiContinuation } from './ag-ui/ag-ui-continuation.service';
import { AgUiRuns } from './ag-ui/ag-ui-runs.service';
import { AiSdkChatController } from './ai-sdk/ai-sdk-chat.controller';
import { AiSdkChats } from './ai-sdk/ai-sdk-chats.service';
import { ProjectedRunStream } from './projected-run-stream.service';
import { WaitingRunTurns } from './waiting-run-turns.service';

/** The public frontend protocols (AI SDK UI message stream, AG-UI), projected from the run event log. */
@Module({
  imports: [SseModule, RunsModule, EventsModule, SessionsModule, StoreModule],
  controllers: [AiSdkChatController, AgUiController],
  providers: [ProjectedRunStream, WaitingRunTurns, AiSdkChats, AgUiRuns, AgUiContinuation],
})
export class FrontendsModule {}
