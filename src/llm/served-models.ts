import { ConfigError, type AppConfig } from '../config/app-config';
import { splitModelName } from './model-name';
import { configuredBy, PROVIDERS, providerBaseUrl, type ProviderDefinition } from './providers';

/**
 * LLM_MODEL, LLM_FALLBACK_MODELS and LLM_MODELS checked against the providers this configuration
 * sets up, before anything starts: a model of a provider left unconfigured is refused in one line
 * naming the variable that configures it (`set ANTHROPIC_API_KEY`), where ModelProviders would stop
 * the application half-built. An LLM_MODELS entry that can never be served is refused too: like a
 * budget for a key that does not exist, it is a typo that would silently allow nothing.
 */
export function refuseUnservedModels(
  config: AppConfig,
  providers: readonly ProviderDefinition[] = PROVIDERS,
): void {
  const lists = [
    ['LLM_MODEL', [config.llm.model], 'a model of a configured provider'],
    ['LLM_FALLBACK_MODELS', config.llm.fallbackModels, 'models of configured providers'],
    ['LLM_MODELS', config.llm.models, 'models (or provider/*) of configured providers'],
  ] as const;
  for (const [variable, names, accepted] of lists) {
    for (const name of names) {
      const problem = unconfiguredProvider(name, config, providers);
      if (problem !== null) throw new ConfigError(variable, `${accepted} (${problem})`, names.join(','));
    }
  }
  for (const agent of config.agents) {
    const problem = agent.model === null ? null : unconfiguredProvider(agent.model, config, providers);
    if (problem !== null) {
      throw new ConfigError(
        'AGENTS_CONFIG',
        `agents whose models are of configured providers (agent ${JSON.stringify(agent.name)}: model ${problem})`,
        agent.model ?? '',
      );
    }
  }
}

/** Why no provider of this configuration serves `name`, or null when one does. */
function unconfiguredProvider(
  name: string,
  config: AppConfig,
  providers: readonly ProviderDefinition[],
): string | null {
  const { provider, model } = splitModelName(name);
  if (model === '') return `${name} names no model`;
  const definition = providers.find((p) => p.name === provider);
  if (definition === undefined) {
    return `${provider} is no model provider (${providers.map((p) => p.name).join(', ')}); write an OpenAI-compatible router's vendor/model as openai/vendor/model`;
  }
  if (providerBaseUrl(definition, config) !== null) return null;
  const setting = configuredBy(definition);
  return `${provider} is not configured${setting === null ? '' : `: set ${setting}`}`;
}
