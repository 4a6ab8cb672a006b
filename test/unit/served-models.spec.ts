import { ConfigError, loadConfig } from '../../src/config/app-config';
import { refuseUnservedModels } from '../../src/llm/served-models';

describe('models of a provider that is not configured', () => {
  it.each([
    ['LLM_MODEL', 'anthropic/claude-sonnet-4-5'],
    ['LLM_FALLBACK_MODELS', 'openai/gpt-4o,anthropic/claude-haiku-4-5'],
    ['LLM_MODELS', 'openai/*,anthropic/*'],
  ])('refuses %s naming anthropic without ANTHROPIC_API_KEY in one line naming it', (variable, value) => {
    const config = loadConfig({ [variable]: value });
    expect(() => refuseUnservedModels(config)).toThrow(ConfigError);
    expect(() => refuseUnservedModels(config)).toThrow(
      new RegExp(`^${variable}=.* is not accepted: .*anthropic is not configured: set ANTHROPIC_API_KEY\\)$`),
    );
    expect(() => refuseUnservedModels(config)).not.toThrow(/router/);
    expect(() =>
      refuseUnservedModels(loadConfig({ [variable]: value, ANTHROPIC_API_KEY: 'k' })),
    ).not.toThrow();
  });

  it('refuses a provider that does not exist, with the hint for routers', () => {
    expect(() => refuseUnservedModels(loadConfig({ LLM_MODEL: 'mistralai/mistral-large' }))).toThrow(
      /mistralai is no model provider \(openai, openai-responses, anthropic, azure\); write an OpenAI-compatible router's vendor\/model as openai\/vendor\/model/,
    );
  });
});
