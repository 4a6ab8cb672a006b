import { Module } from '@nestjs/common';
import { RunsModule } from '../runs/runs.module';
import { SessionsModule } from '../sessions/sessions.module';
import { StoreModule } from '../store/store.module';
import { ScheduleTicker } from './schedule-ticker.service';
import { SchedulesController } from './schedules.controller';
import { Schedules } from './schedules.service';

/** `/v1/schedules`: prompts on a cron, and the ticker that starts their runs (one per due time). */
@Module({
  imports: [RunsModule, SessionsModule, StoreModule],
  controllers: [SchedulesController],
  providers: [Schedules, ScheduleTicker],
})
export class SchedulesModule {}
