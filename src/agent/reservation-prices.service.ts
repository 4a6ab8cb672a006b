import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { fullModelName } from '../llm/model-name';
import { ModelPrices } from '../llm/model-prices.service';
import type { ReservedLimit } from '../store/budget-store.service';

/** Per token, in USD: what the prompt and the output of a call may cost at most (0: no price). */
export interface TokenPrices {
  input: number;
  output: number;
}

const MILLION = 1_000_000;

/** What a reservation prices a call at (RunAccounting): the most it may cost, per token. */
@Injectable()
export class ReservationPrices {
  private readonly known = new Map<string, TokenPrices>();

  constructor(
    private readonly modelPrices: ModelPrices,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'llm'>,
  ) {}

  /**
   * The most a prompt token and an output token of `model` may cost — of any fallback that may
   * answer instead, too; a prompt token as the dearer of plain input and a cache write.
   */
  of(model: string): TokenPrices {
    let known = this.known.get(model);
    if (!known) {
      const perToken = (usage: Parameters<ModelPrices['costUsd']>[1]) =>
        Math.max(
          0,
          ...[model, ...this.config.llm.fallbackModels].map(
            (m) => (this.modelPrices.costUsd(fullModelName(m), usage) ?? 0) / MILLION,
          ),
        );
      known = {
        input: Math.max(
          perToken({ promptTokens: MILLION, completionTokens: 0 }),
          perToken({ promptTokens: MILLION, completionTokens: 0, cacheWriteTokens: MILLION }),
        ),
        output: perToken({ promptTokens: 0, completionTokens: MILLION }),
      };
      this.known.set(model, known);
    }
    return known;
  }
}

/** A model without a price spends nothing against a usd limit: only its tokens limits apply. */
export function pricedLimits(limits: readonly ReservedLimit[], price: TokenPrices): ReservedLimit[] {
  const priced = price.input > 0 || price.output > 0;
  return limits.filter((l) => l.unit === 'tokens' || priced);
}

/** A reservation's prompt, priced, and the output it asks for. */
export function askOf(price: TokenPrices, promptTokens: number, maxOutput: number, minOutput: number) {
  return {
    promptTokens,
    promptUsd: promptTokens * price.input,
    outputUsdPerToken: price.output,
    maxOutput,
    minOutput,
  };
}
