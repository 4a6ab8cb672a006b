import { Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { MODEL_PROVIDER, type ModelProvider } from './model-provider';
import { ModelPrices } from './model-prices';
import { ModelProviders } from './model-providers';
import { OpenAiProvider } from './openai.provider';

/**
 * The models: the default provider under MODEL_PROVIDER (any OpenAI-compatible Chat Completions
 * endpoint), and ModelProviders, where further providers register under a prefix of the model name.
 */
@Module({
  providers: [
    ModelPrices,
    {
      provide: MODEL_PROVIDER,
      useFactory: (config: AppConfig) => new OpenAiProvider(config),
      inject: [APP_CONFIG],
    },
    {
      provide: ModelProviders,
      useFactory: (fallback: ModelProvider, config: AppConfig) =>
        new ModelProviders(fallback, config.llm.model),
      inject: [MODEL_PROVIDER, APP_CONFIG],
    },
  ],
  exports: [MODEL_PROVIDER, ModelProviders, ModelPrices],
})
export class LlmModule {}
