import { Global, Module } from '@nestjs/common';
import { RunTracing } from './run-tracing.service';

/** Run traces (OpenTelemetry, OTLP), for every module that drives runs. */
@Global()
@Module({ providers: [RunTracing], exports: [RunTracing] })
export class TracingModule {}
