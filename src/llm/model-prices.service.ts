import { Inject, Injectable } from '@nestjs/common';
import { calcPrice } from '@pydantic/genai-prices';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import type { ModelPrice } from '../config/team-config';
import type { Usage } from './model-provider';
import { splitModelName } from './model-name';
import { providerDefinition } from './providers';

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
    if (override) return exactUsd(priced(override, usage));
    const { provider, model } = splitModelName(providerModel);
    // genai-prices' id of the provider, as its definition declares it.
    const providerId = providerDefinition(provider)?.ids.prices;
    if (providerId === undefined || providerId === null) return null;
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
      return price && Number.isFinite(price.total_price) ? exactUsd(price.total_price) : null;
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
 * Money is kept exact to the nano-dollar: each call's cost is rounded there once, as it is priced,
 * and costs are added as whole nano-dollars (PostgreSQL adds them as `numeric`), so a sum shows
 * `0.105`, never the float noise `0.10500000000000001`. A nano-dollar is a thousandth of the
 * cheapest token of any listed model.
 */
const NANO = 1_000_000_000;

/** `usd` rounded to the nano-dollar: the nearest double to a decimal of at most 9 places. */
export function exactUsd(usd: number): number {
  return Math.round(usd * NANO) / NANO;
}

/** The sum of two costs of at most 9 decimals, exact (unknown only while neither is known). */
export function addUsd(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return (Math.round(a * NANO) + Math.round(b * NANO)) / NANO;
}
