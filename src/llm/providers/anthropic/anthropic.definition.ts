import type { ProviderDefinition } from '../provider-definition';
import { ANTHROPIC_BASE_URL, AnthropicProvider } from './anthropic.provider';

/** `anthropic/<model>`: Anthropic's Messages API; configured by ANTHROPIC_API_KEY. */
export const ANTHROPIC_PROVIDER: ProviderDefinition = {
  name: 'anthropic',
  endpoint: { name: 'ANTHROPIC', defaultBaseUrl: ANTHROPIC_BASE_URL, needsKey: true },
  ids: { prices: 'anthropic', contextWindow: 'anthropic' },
  tokenizer: 'claude',
  // Image and PDF blocks; no response format (a schema goes as a tool).
  accepts: { images: true, documents: true, structuredOutput: false },
  create: (config) => new AnthropicProvider(config),
  // Its `GET /v1/models` takes the key as `x-api-key`, with a version.
  upstreamCheck: (baseUrl, apiKey, headers) => ({
    provider: 'anthropic',
    baseUrl: `${baseUrl.replace(/\/+$/, '')}/v1`,
    apiKey: null,
    headers: { ...headers, 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' },
  }),
};
