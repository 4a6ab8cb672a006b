import { Inject, Injectable } from '@nestjs/common';
import { calcPrice } from '@pydantic/genai-prices';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import type { ModelPrice } from '../config/team-config';
import type { Usage } from './model-provider';
import { fullModelName, splitModelName } from './model-providers';

/** genai-prices' provider ids of our providers (the Responses API is OpenAI's price list too). */
const PRICE_PROVIDERS: Readonly<Record<string, string>> = {
  openai: 'openai',
  'openai-responses': 'openai',
  anthropic: 'anthropic',
};

/**
 * The cost in USD of one model call. MODEL_PRICES first (exact `provider/model`), then the table of
 * `@pydantic/genai-prices` as installed: its bundled data is the maintained price list of the
 * Pydantic team (one JSON file, updated as providers change prices and released often), so
 * `npm update @pydantic/genai-prices` keeps it current; its `updatePrices` could fetch the same data
 * at run time, which a server that must answer the same cost for the same call everywhere does not
 * do. Null for a model neither knows.
 */
@Injectable()
export class ModelPrices {
  private readonly overrides: ReadonlyMap<string, ModelPrice>;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'modelPrices'>) {
    this.overrides = new Map(Object.entries(config.modelPrices));
  }

  /** Whether MODEL_PRICES names `providerModel` (a bounded, configured set). */
  isConfigured(providerModel: string): boolean {
    return this.overrides.has(providerModel);
  }

  /** `provider/model` as the run names it, and what the call used. */
  costUsd(providerModel: string, usage: Usage): number | null {
    const override = this.overrides.get(providerModel);
    if (override) return priced(override, usage);
    const { provider, model: qualified } = qualifiedModel(providerModel);
    const model = qualified.slice(provider.length + 1);
    const providerId = PRICE_PROVIDERS[provider];
    if (providerId === undefined) return null;
    try {
      const price = calcPrice(
        {
          input_tokens: usage.promptTokens,
          output_tokens: usage.completionTokens,
          ...(usage.cacheReadTokens ? { cache_read_tokens: usage.cacheReadTokens } : {}),
          ...(usage.cacheWriteTokens ? { cache_write_tokens: usage.cacheWriteTokens } : {}),
        },
        model,
        { providerId },
      ) as { total_price: number } | null;
      return price && Number.isFinite(price.total_price) ? price.total_price : null;
    } catch {
      // A usage the table cannot price (e.g. more cached than prompt tokens reported) has no price.
      return null;
    }
  }
}

/** USD of `usage` at `price` (per million); cached tokens are part of the prompt tokens. */
export function priced(price: ModelPrice, usage: Usage): number {
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  const uncached = Math.max(0, usage.promptTokens - cacheRead - cacheWrite);
  return (
    (uncached * price.input +
      cacheRead * (price.cacheRead ?? price.input) +
      cacheWrite * (price.cacheWrite ?? price.input) +
      usage.completionTokens * price.output) /
    1_000_000
  );
}

/**
 * A model name as sessions and LLM_MODEL give it, with its provider and in full (`gpt-4o` →
 * `openai`, `openai/gpt-4o`): the names ModelProviders accepts (a first segment that names no
 * provider is refused before any call, so it never reaches a price).
 */
export function qualifiedModel(name: string): { provider: string; model: string } {
  return { provider: splitModelName(name).provider, model: fullModelName(name) };
}
