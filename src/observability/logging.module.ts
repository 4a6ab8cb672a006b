import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { loggerParams, logsAsText } from './logger-params';

/** nestjs-pino for the whole application: Nest's own logs, request logs and request ids. */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => loggerParams(config, logsAsText(config)),
    }),
  ],
})
export class LoggingModule {}
