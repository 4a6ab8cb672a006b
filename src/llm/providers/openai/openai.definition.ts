import type { ProviderDefinition } from '../provider-definition';
import { OPENAI_ENDPOINT, OpenAiProvider } from './openai.provider';

/** `openai/<model>`: Chat Completions of any OpenAI-compatible server; always configured. */
export const OPENAI: ProviderDefinition = {
  name: 'openai',
  endpoint: OPENAI_ENDPOINT,
  ids: { prices: 'openai', contextWindow: 'openai' },
  tokenizer: 'by-model-name',
  // Chat Completions' image_url parts and response_format json_schema; documents only on OpenAI's own.
  accepts: { images: true, documents: false, structuredOutput: true },
  create: (config) => new OpenAiProvider(config),
};
