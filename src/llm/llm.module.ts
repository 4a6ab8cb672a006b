import { Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { MODEL_READS_PER_TICK } from '../common/tuning';
import { MODEL_PROVIDER, type ModelProvider } from './model-provider';
import { ModelPrices } from './model-prices';
import { ModelProviders } from './model-providers';
import { PROVIDERS } from './providers';
import { OPENAI } from './providers/openai/openai.definition';
import { ReadTicks } from './read-ticks';

/**
 * The models: ModelProviders with every configured provider of providers/index.ts. The `openai`
 * one is also under MODEL_PROVIDER, so that tests can put a scripted model in its place.
 */
@Module({
  providers: [
    // One queue of model reads for the process: every provider reading bodies shares it.
    { provide: ReadTicks, useFactory: () => new ReadTicks(MODEL_READS_PER_TICK) },
    ModelPrices,
    {
      provide: MODEL_PROVIDER,
      useFactory: (config: AppConfig, reads: ReadTicks) => OPENAI.create(config, { reads }),
      inject: [APP_CONFIG, ReadTicks],
    },
    {
      provide: ModelProviders,
      useFactory: (openai: ModelProvider, config: AppConfig, reads: ReadTicks) =>
        new ModelProviders(
          config,
          PROVIDERS.flatMap((p) => {
            const baseUrl = p.baseUrl(config);
            if (baseUrl === null) return [];
            return [{ name: p.name, baseUrl, provider: p === OPENAI ? openai : p.create(config, { reads }) }];
          }),
        ),
      inject: [MODEL_PROVIDER, APP_CONFIG, ReadTicks],
    },
  ],
  exports: [MODEL_PROVIDER, ModelProviders, ModelPrices],
})
export class LlmModule {}
