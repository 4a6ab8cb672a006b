import { Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { MODEL_READS_PER_TICK } from '../common/tuning';
import { MODEL_PROVIDER, type ModelProvider } from './model-provider';
import { ModelPrices } from './model-prices';
import { ModelProviders } from './model-providers';
import { OpenAiProvider } from './openai.provider';
import { ReadTicks } from './read-ticks';

/**
 * The models: the default provider under MODEL_PROVIDER (any OpenAI-compatible Chat Completions
 * endpoint), and ModelProviders, where further providers register under a prefix of the model name.
 */
@Module({
  providers: [
    // One queue of model reads for the process: every provider reading bodies shares it.
    { provide: ReadTicks, useFactory: () => new ReadTicks(MODEL_READS_PER_TICK) },
    ModelPrices,
    {
      provide: MODEL_PROVIDER,
      useFactory: (config: AppConfig, reads: ReadTicks) => new OpenAiProvider(config, reads),
      inject: [APP_CONFIG, ReadTicks],
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
