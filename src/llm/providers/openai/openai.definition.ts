import type { ProviderDefinition } from '../provider-definition';
import { OPENAI_BASE_URL, OpenAiProvider } from './openai.provider';

/** `openai/<model>`: Chat Completions of any OpenAI-compatible server; always configured. */
export const OPENAI: ProviderDefinition = {
  name: 'openai',
  variables: { configuredBy: null, secrets: ['OPENAI_API_KEY', 'OPENAI_BASE_URL'] },
  ids: { prices: 'openai', contextWindow: 'openai' },
  tokenizer: 'by-model-name',
  // Chat Completions' image_url parts and response_format json_schema; documents only on OpenAI's own.
  accepts: { images: true, documents: false, structuredOutput: true },
  baseUrl: (config) => config.llm.baseUrl ?? OPENAI_BASE_URL,
  create: (config) => new OpenAiProvider(config),
};
