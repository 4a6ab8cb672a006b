import type { AppConfig } from '../../config/app-config';
import type { ModelProvider } from '../model-provider';
import type { ReadTicks } from '../read-ticks';

/** What the process shares with every provider it creates (LlmModule). */
export interface ProviderServices {
  /** The queue of model reads: bodies read a few per tick, across every provider. */
  reads: ReadTicks;
}

/** One provider as a folder of src/llm/providers/ registers it (providers/index.ts). */
export interface ProviderDefinition {
  /** The prefix of its models: `<name>/<model>`. */
  readonly name: string;
  /** Where its requests go, or null when it is not configured (its models are then refused). */
  baseUrl(config: AppConfig): string | null;
  create(config: AppConfig, services: ProviderServices): ModelProvider;
}
