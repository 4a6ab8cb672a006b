import { bannerRecord, bannerText, type BannerFacts } from '../../src/observability/startup-banner';

const facts: BannerFacts = {
  url: 'http://127.0.0.1:3000',
  model: { name: 'gpt-4.1-mini', provider: 'openai', baseUrl: 'https://router.example.com/v1' },
  providers: [
    { name: 'openai', baseUrl: 'https://router.example.com/v1' },
    { name: 'anthropic', baseUrl: 'https://api.anthropic.com' },
  ],
  fallbacks: ['anthropic/claude-haiku-4-5'],
  budgets: ['alice: 5 USD/day, 100000 tokens/hour', '* (every other key): 1 USD/day'],
  adminKeys: ['ops'],
  traces: {
    endpoint: 'https://collector.example.com/v1/traces',
    protocol: 'http/protobuf',
    captureContent: false,
  },
  database: { kind: 'embedded', dataDir: '/srv/.data' },
  workspace: { root: '/srv/workspace', scope: 'shared' },
  keys: ['alice', 'ops'],
  tools: [],
  mcp: [],
  off: [],
};

describe('the start-up banner says what a team configured', () => {
  it('names the providers, fallbacks, budgets, admin keys and where traces go', () => {
    const text = bannerText(facts);
    expect(text).toMatch(
      /Providers +openai \(https:\/\/router\.example\.com\/v1\), anthropic \(https:\/\/api\.anthropic\.com\)/,
    );
    expect(text).toMatch(/Fallbacks +anthropic\/claude-haiku-4-5/);
    expect(text).toMatch(
      /Budgets +alice: 5 USD\/day, 100000 tokens\/hour; \* \(every other key\): 1 USD\/day/,
    );
    expect(text).toMatch(/Admin keys +ops/);
    expect(text).toMatch(/Traces +https:\/\/collector\.example\.com\/v1\/traces \(http\/protobuf\)/);
    expect(bannerRecord(facts)).toMatchObject({
      providers: facts.providers,
      fallbacks: facts.fallbacks,
      budgets: facts.budgets,
      adminKeys: ['ops'],
      traces: facts.traces,
    });
  });

  it('says what is unset and what that means', () => {
    const text = bannerText({ ...facts, fallbacks: [], budgets: [], adminKeys: [], traces: null });
    expect(text).toMatch(/Fallbacks +none \(LLM_FALLBACK_MODELS unset\)/);
    expect(text).toMatch(/Budgets +none \(BUDGETS unset\): no key is limited/);
    expect(text).toMatch(/Admin keys +none \(ADMIN_KEYS unset\)/);
    expect(text).toMatch(/Traces +off \(OTEL_EXPORTER_OTLP_ENDPOINT unset\)/);
  });
});
