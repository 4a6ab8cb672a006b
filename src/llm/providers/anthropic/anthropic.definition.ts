import type { ProviderDefinition } from '../provider-definition';
import { ANTHROPIC_BASE_URL, AnthropicProvider } from './anthropic.provider';

/** `anthropic/<model>`: Anthropic's Messages API; configured by ANTHROPIC_API_KEY. */
export const ANTHROPIC_PROVIDER: ProviderDefinition = {
  name: 'anthropic',
  variables: { configuredBy: 'ANTHROPIC_API_KEY', secrets: ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'] },
  ids: { prices: 'anthropic', contextWindow: 'anthropic' },
  tokenizer: 'claude',
  // Image and PDF blocks; no response format (a schema goes as a tool).
  accepts: { images: true, documents: true, structuredOutput: false },
  baseUrl: (config) =>
    config.llm.anthropic.apiKey === null ? null : (config.llm.anthropic.baseUrl ?? ANTHROPIC_BASE_URL),
  create: (config) => new AnthropicProvider(config),
};
