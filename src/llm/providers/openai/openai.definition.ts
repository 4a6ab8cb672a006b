import type { ProviderDefinition } from '../provider-definition';
import { OPENAI_BASE_URL, OpenAiProvider } from './openai.provider';

/** `openai/<model>`: Chat Completions of any OpenAI-compatible server; always configured. */
export const OPENAI: ProviderDefinition = {
  name: 'openai',
  baseUrl: (config) => config.llm.baseUrl ?? OPENAI_BASE_URL,
  create: (config) => new OpenAiProvider(config),
};
