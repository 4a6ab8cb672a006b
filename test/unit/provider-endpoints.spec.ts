import { ModelPrices } from '../../src/llm/model-prices.service';
import { ConfigError, loadConfig } from '../../src/config/app-config';
import { ENDPOINT_NAMES } from '../../src/config/secret-variables';
import { configuredBy, PROVIDERS, providerBaseUrl } from '../../src/llm/providers';
import { upstreamsToCheck } from '../../src/startup-facts';

/**
 * A provider's settings come from its endpoint's two variables, declared once among the secrets:
 * config/ reads every declared endpoint, the definitions read their own. No provider is special in
 * AppConfig.
 */
describe('model provider endpoints', () => {
  it('reads every endpoint the secrets table declares, and only those', () => {
    expect([...ENDPOINT_NAMES].sort()).toEqual(['ANTHROPIC', 'AZURE_OPENAI', 'OPENAI']);
    const config = loadConfig(
      { ANTHROPIC_API_KEY: 'sk-ant', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
      '/tmp',
    );
    expect(config.llm.endpoints).toEqual({
      OPENAI: { apiKey: null, baseUrl: 'http://127.0.0.1:9/v1' },
      ANTHROPIC: { apiKey: 'sk-ant', baseUrl: null },
      AZURE_OPENAI: { apiKey: null, baseUrl: null },
    });
  });

  it('refuses a bad base URL naming its variable, for any endpoint', () => {
    expect(() => loadConfig({ ANTHROPIC_BASE_URL: 'ftp://x' }, '/tmp')).toThrow(ConfigError);
    expect(() => loadConfig({ ANTHROPIC_BASE_URL: 'ftp://x' }, '/tmp')).toThrow(/ANTHROPIC_BASE_URL/);
  });

  it('configures a provider that needs a key only once it is set, and names that variable', () => {
    const anthropic = PROVIDERS.find((p) => p.name === 'anthropic')!;
    expect(providerBaseUrl(anthropic, loadConfig({}, '/tmp'))).toBeNull();
    expect(configuredBy(anthropic)).toBe('ANTHROPIC_API_KEY');
    expect(providerBaseUrl(anthropic, loadConfig({ ANTHROPIC_API_KEY: 'k' }, '/tmp'))).toBe(
      'https://api.anthropic.com',
    );
    const openai = PROVIDERS.find((p) => p.name === 'openai')!;
    expect(configuredBy(openai)).toBeNull();
    expect(providerBaseUrl(openai, loadConfig({}, '/tmp'))).toBe('https://api.openai.com/v1');
  });

  it('configures a provider with no default URL only once its key and its URL are set, and names both', () => {
    const azure = PROVIDERS.find((p) => p.name === 'azure')!;
    expect(configuredBy(azure)).toBe('AZURE_OPENAI_API_KEY and AZURE_OPENAI_BASE_URL');
    expect(providerBaseUrl(azure, loadConfig({ AZURE_OPENAI_API_KEY: 'k' }, '/tmp'))).toBeNull();
    const url = 'https://my-resource.openai.azure.com/openai/v1';
    expect(providerBaseUrl(azure, loadConfig({ AZURE_OPENAI_BASE_URL: url }, '/tmp'))).toBeNull();
    expect(
      providerBaseUrl(azure, loadConfig({ AZURE_OPENAI_API_KEY: 'k', AZURE_OPENAI_BASE_URL: url }, '/tmp')),
    ).toBe(url);
  });

  it('checks each configured upstream once at start-up, each the way its API takes a key', () => {
    expect(upstreamsToCheck(loadConfig({ OPENAI_API_KEY: 'sk-o' }, '/tmp'))).toEqual([
      { provider: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-o', headers: {} },
    ]);
    const both = upstreamsToCheck(
      loadConfig({ ANTHROPIC_API_KEY: 'sk-ant', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/' }, '/tmp'),
    );
    expect(both.map((u) => u.provider)).toEqual(['openai', 'anthropic']);
    expect(both[1]).toEqual({
      provider: 'anthropic',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: null,
      headers: { 'x-api-key': 'sk-ant', 'anthropic-version': '2023-06-01' },
    });
  });
});

describe('an azure deployment named as its model', () => {
  it("is priced from Azure's prices", () => {
    const prices = new ModelPrices({ modelPrices: {} });
    const usage = { promptTokens: 1_000_000, completionTokens: 0 };
    expect(prices.costUsd('azure/gpt-4.1', usage)).toBeGreaterThan(0);
    expect(prices.costUsd('azure/team-deployment', usage)).toBeNull();
  });
});
