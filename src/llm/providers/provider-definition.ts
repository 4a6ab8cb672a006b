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
  /**
   * How the rest of the server names its models elsewhere: the provider id of the price table
   * (`@pydantic/genai-prices`) and of the context-window registry (tokenlens), or null when neither
   * knows the provider (its calls are then unpriced unless MODEL_PRICES names them; its window is
   * CONTEXT_TOKENS). A model keeps its own name there (its last segment, for the registry).
   */
  readonly ids: { readonly prices: string | null; readonly contextWindow: string | null };
  /**
   * How its tokens are counted before it reports them: `claude` estimates with Claude's factor;
   * `by-model-name` counts an OpenAI model (`gpt-…`, `o…`) exactly and estimates any other.
   */
  readonly tokenizer: 'claude' | 'by-model-name';
  /**
   * What its API takes besides text and tools: images, documents (PDF), and structured output (a
   * JSON schema the answer must follow). Declared for the features that send them.
   */
  readonly accepts: {
    readonly images: boolean;
    readonly documents: boolean;
    readonly structuredOutput: boolean;
  };
  /** Where its requests go, or null when it is not configured (its models are then refused). */
  baseUrl(config: AppConfig): string | null;
  create(config: AppConfig): ModelProvider;
}
