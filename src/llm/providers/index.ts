import { ANTHROPIC_PROVIDER } from './anthropic/anthropic.definition';
import { AZURE_OPENAI } from './azure/azure.definition';
import { OPENAI } from './openai/openai.definition';
import { OPENAI_RESPONSES_PROVIDER } from './openai-responses/openai-responses.definition';
import type { ProviderDefinition } from './provider-definition';

export {
  configuredBy,
  providerBaseUrl,
  upstreamToCheck,
  type ProviderDefinition,
} from './provider-definition';

/**
 * Every model provider: a folder each, registered here (one line). Only the configured ones are
 * created; a model of another is refused (start-up for LLM_MODEL, a 400 for a session).
 */
export const PROVIDERS: readonly ProviderDefinition[] = [
  OPENAI,
  OPENAI_RESPONSES_PROVIDER,
  ANTHROPIC_PROVIDER,
  AZURE_OPENAI,
];

const BY_NAME: ReadonlyMap<string, ProviderDefinition> = new Map(PROVIDERS.map((p) => [p.name, p]));

/** The definition of the provider named `name` (splitModelName's `provider`), if there is one. */
export function providerDefinition(name: string): ProviderDefinition | undefined {
  return BY_NAME.get(name);
}
