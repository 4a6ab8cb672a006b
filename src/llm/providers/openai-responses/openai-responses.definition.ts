import type { ProviderDefinition } from '../provider-definition';
import { OPENAI_BASE_URL } from '../openai/openai.provider';
import { OpenAiResponsesProvider } from './openai-responses.provider';

/** `openai-responses/<model>`: OpenAI's Responses API, with the `openai` provider's key and base URL. */
export const OPENAI_RESPONSES_PROVIDER: ProviderDefinition = {
  name: 'openai-responses',
  endpoint: { name: 'OPENAI', defaultBaseUrl: OPENAI_BASE_URL, needsKey: false },
  // OpenAI's price list and models.
  ids: { prices: 'openai', contextWindow: 'openai' },
  tokenizer: 'by-model-name',
  accepts: { images: true, documents: true, structuredOutput: true },
  create: (config) => new OpenAiResponsesProvider(config),
};
