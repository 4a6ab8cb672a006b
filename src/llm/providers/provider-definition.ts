import type { AppConfig } from '../../config/app-config';
import type { ModelProvider } from '../model-provider';

/** One provider as a folder of src/llm/providers/ registers it (providers/index.ts). */
export interface ProviderDefinition {
  /** The prefix of its models: `<name>/<model>`. */
  readonly name: string;
  /** Where its requests go, or null when it is not configured (its models are then refused). */
  baseUrl(config: AppConfig): string | null;
  create(config: AppConfig): ModelProvider;
}
