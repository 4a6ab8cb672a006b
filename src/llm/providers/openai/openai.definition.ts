import type { ProviderDefinition } from '../provider-definition';
import { OPENAI_BASE_URL, OpenAiProvider } from './openai.provider';

/** `openai/<model>`: Chat Completions of any OpenAI-compatible server; always configured. */
export const OPENAI: ProviderDefinition = {
  name: 'openai',
  variables: { configuredBy: null, secrets: ['OPENAI_API_KEY', 'OPENAI_BASE_URL'] },
  baseUrl: (config) => config.llm.baseUrl ?? OPENAI_BASE_URL,
  create: (config) => new OpenAiProvider(config),
};
