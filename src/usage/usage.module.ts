import { Module } from '@nestjs/common';
import { StoreModule } from '../store/store.module';
import { UsageController } from './usage.controller';
import { UsageReports } from './usage-reports.service';

/** `GET /v1/usage`: a key's model calls, tokens and cost, grouped. */
@Module({
  imports: [StoreModule],
  controllers: [UsageController],
  providers: [UsageReports],
})
export class UsageModule {}
