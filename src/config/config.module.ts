import { Global, Module } from '@nestjs/common';
import type { AppConfig } from './app-config';

export const APP_CONFIG = Symbol('APP_CONFIG');

/** Provides the validated AppConfig under APP_CONFIG to every module. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig) {
    return {
      module: ConfigModule,
      providers: [{ provide: APP_CONFIG, useValue: config }],
      exports: [APP_CONFIG],
    };
  }
}
