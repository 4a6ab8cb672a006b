import type { ProviderDefinition } from '../provider-definition';
import { OpenAiProvider } from '../openai/openai.provider';

/**
 * `azure/<deployment>`: an Azure OpenAI (Foundry) resource's v1 API, Chat Completions as OpenAI's but
 * at the resource's own URL (`https://<resource>.openai.azure.com/openai/v1`, no default: it is
 * configured once AZURE_OPENAI_API_KEY and AZURE_OPENAI_BASE_URL are both set) and with a model named
 * by its deployment. A deployment named as its model (`gpt-4.1`) is priced from Azure's prices and
 * sized from OpenAI's registry; one named otherwise is unpriced unless MODEL_PRICES names it.
 */
export const AZURE_OPENAI: ProviderDefinition = {
  name: 'azure',
  endpoint: { name: 'AZURE_OPENAI', defaultBaseUrl: null, needsKey: true },
  ids: { prices: 'azure', contextWindow: 'openai' },
  tokenizer: 'by-model-name',
  accepts: { images: true, documents: false, structuredOutput: true },
  create: (config) => new OpenAiProvider(config, AZURE_OPENAI.endpoint),
};
