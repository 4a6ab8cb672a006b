import type { AppConfig } from '../../config/app-config';
import type { SecretVariable } from '../../config/secret-variables';
import type { ModelProvider } from '../model-provider';

/** One provider as a folder of src/llm/providers/ registers it (providers/index.ts). */
export interface ProviderDefinition {
  /** The prefix of its models: `<name>/<model>`. */
  readonly name: string;
  /**
   * The variables of its settings (config/ reads them into AppConfig.llm): the one that configures
   * it when it is not always on (named in the refusal of a model of it while unset), and the secret
   * ones — names of config's SECRET_VARIABLES, so a provider's new key is declared a secret there
   * (kept from run_command, redacted in refusals) or this does not compile.
   */
  readonly variables: { readonly configuredBy: string | null; readonly secrets: readonly SecretVariable[] };
  /** Where its requests go, or null when it is not configured (its models are then refused). */
  baseUrl(config: AppConfig): string | null;
  create(config: AppConfig): ModelProvider;
}
