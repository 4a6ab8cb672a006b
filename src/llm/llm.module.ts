import { Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { MODEL_PROVIDER } from './model-provider';
import { OpenAiProvider } from './openai.provider';

/** The model behind MODEL_PROVIDER: any OpenAI-compatible Chat Completions endpoint. */
@Module({
  providers: [
    {
      provide: MODEL_PROVIDER,
      useFactory: (config: AppConfig) => new OpenAiProvider(config),
      inject: [APP_CONFIG],
    },
  ],
  exports: [MODEL_PROVIDER],
})
export class LlmModule {}
