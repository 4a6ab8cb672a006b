import { Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { Metrics } from './metrics.service';

@Global()
@Module({ controllers: [MetricsController], providers: [Metrics], exports: [Metrics] })
export class MetricsModule {}
