import { Module } from '@nestjs/common';
import { LlmModule } from '../llm/llm.module';
import { RunsModule } from '../runs/runs.module';
import { StoreModule } from '../store/store.module';
import { ForksController } from './forks.controller';
import { Forks } from './forks.service';
import { Replays } from './replays.service';

/** Forks of sessions and replays of runs ("Fork and replay"). */
@Module({
  imports: [StoreModule, RunsModule, LlmModule],
  controllers: [ForksController],
  providers: [Forks, Replays],
})
export class ForksModule {}
