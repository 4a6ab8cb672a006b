import { ANTHROPIC_PROVIDER } from './anthropic/anthropic.definition';
import { OPENAI } from './openai/openai.definition';
import { OPENAI_RESPONSES_PROVIDER } from './openai-responses/openai-responses.definition';
import type { ProviderDefinition } from './provider-definition';

export type { ProviderDefinition } from './provider-definition';

/**
 * Every model provider: a folder each, registered here (one line). Only the configured ones are
 * created; a model of another is refused (start-up for LLM_MODEL, a 400 for a session).
 */
export const PROVIDERS: readonly ProviderDefinition[] = [
  OPENAI,
  OPENAI_RESPONSES_PROVIDER,
  ANTHROPIC_PROVIDER,
];
