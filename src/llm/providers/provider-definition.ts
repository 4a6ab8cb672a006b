import type { AppConfig } from '../../config/app-config';
import type { EndpointName } from '../../config/secret-variables';
import type { ModelProvider } from '../model-provider';
import type { UpstreamToCheck } from '../upstream-check';

/** Where a provider sends its requests (ProviderDefinition.endpoint). */
export interface ProviderEndpoint {
  readonly name: EndpointName;
  readonly defaultBaseUrl: string | null;
  readonly needsKey: boolean;
}

/** One provider as a folder of src/llm/providers/ registers it (providers/index.ts). */
export interface ProviderDefinition {
  /** The prefix of its models: `<name>/<model>`. */
  readonly name: string;
  /**
   * Where it sends requests: the endpoint whose `<NAME>_API_KEY` and `<NAME>_BASE_URL` set it up
   * (declared in config/secret-variables.ts, so its key is a secret — kept from run_command, redacted
   * in refusals — or this does not compile; config/ reads them into AppConfig.llm.endpoints), the base
   * URL used when none is set (null: there is none, as for a cloud resource of one's own — then it is
   * configured only once `<NAME>_BASE_URL` is set), and whether it is configured only once its key is
   * set (a model of it is then refused naming `<NAME>_API_KEY`) or always (a local server may need no key).
   */
  readonly endpoint: ProviderEndpoint;
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
  create(config: AppConfig): ModelProvider;
  /**
   * What start-up asks to learn whether its upstream answers and takes the key; the default asks
   * `GET {baseUrl}/models` with the key as a bearer token (every OpenAI-compatible server has it).
   */
  upstreamCheck?(baseUrl: string, apiKey: string, headers: Readonly<Record<string, string>>): UpstreamToCheck;
}

/** Where `definition`'s requests go, or null when it is not configured (its models are then refused). */
export function providerBaseUrl(definition: ProviderDefinition, config: AppConfig): string | null {
  const { name, defaultBaseUrl, needsKey } = definition.endpoint;
  const endpoint = config.llm.endpoints[name];
  if (needsKey && endpoint.apiKey === null) return null;
  return endpoint.baseUrl ?? defaultBaseUrl;
}

/** The variables that configure `definition` when it is not always on (named when one of its models is refused). */
export function configuredBy(definition: ProviderDefinition): string | null {
  const { name, needsKey, defaultBaseUrl } = definition.endpoint;
  const needed = [
    ...(needsKey ? [`${name}_API_KEY`] : []),
    ...(defaultBaseUrl === null ? [`${name}_BASE_URL`] : []),
  ];
  return needed.length === 0 ? null : needed.join(' and ');
}

/** What start-up checks of a configured provider (see ProviderDefinition.upstreamCheck). */
export function upstreamToCheck(definition: ProviderDefinition, config: AppConfig): UpstreamToCheck | null {
  const baseUrl = providerBaseUrl(definition, config);
  if (baseUrl === null) return null;
  const apiKey = config.llm.endpoints[definition.endpoint.name].apiKey;
  if (definition.upstreamCheck !== undefined && apiKey !== null) {
    return definition.upstreamCheck(baseUrl, apiKey, config.llm.headers);
  }
  return { provider: definition.name, baseUrl, apiKey, headers: config.llm.headers };
}
