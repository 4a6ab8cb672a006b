import { Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { MODEL_PROVIDER, type ModelProvider } from './model-provider';
import { ModelPrices } from './model-prices.service';
import { ModelProviders } from './model-providers.service';
import { configuredBy, PROVIDERS, providerBaseUrl } from './providers';
import { OPENAI } from './providers/openai/openai.definition';

/**
 * The models: ModelProviders with every configured provider of providers/index.ts. The `openai`
 * one is also under MODEL_PROVIDER, so that tests can put a scripted model in its place.
 */
@Module({
  providers: [
    ModelPrices,
    {
      provide: MODEL_PROVIDER,
      useFactory: (config: AppConfig) => OPENAI.create(config),
      inject: [APP_CONFIG],
    },
    {
      provide: ModelProviders,
      useFactory: (openai: ModelProvider, config: AppConfig) =>
        new ModelProviders(
          config,
          PROVIDERS.flatMap((p) => {
            const baseUrl = providerBaseUrl(p, config);
            if (baseUrl === null) return [];
            return [{ name: p.name, baseUrl, provider: p === OPENAI ? openai : p.create(config) }];
          }),
          new Map(
            PROVIDERS.filter((p) => providerBaseUrl(p, config) === null).map((p) => [
              p.name,
              configuredBy(p),
            ]),
          ),
        ),
      inject: [MODEL_PROVIDER, APP_CONFIG],
    },
  ],
  exports: [MODEL_PROVIDER, ModelProviders, ModelPrices],
})
export class LlmModule {}
