import type { ProviderDefinition } from '../provider-definition';
import { OPENAI_BASE_URL } from '../openai/openai.provider';
import { OpenAiResponsesProvider } from './openai-responses.provider';

/** `openai-responses/<model>`: OpenAI's Responses API, with the `openai` provider's key and base URL. */
export const OPENAI_RESPONSES_PROVIDER: ProviderDefinition = {
  name: 'openai-responses',
  variables: { configuredBy: null, secrets: ['OPENAI_API_KEY', 'OPENAI_BASE_URL'] },
  // OpenAI's price list and models.
  ids: { prices: 'openai', contextWindow: 'openai' },
  tokenizer: 'by-model-name',
  accepts: { images: true, documents: true, structuredOutput: true },
  baseUrl: (config) => config.llm.baseUrl ?? OPENAI_BASE_URL,
  create: (config) => new OpenAiResponsesProvider(config),
};
