import { ConfigError, loadConfig } from '../../src/config/app-config';
import { secondsUntilRollover } from '../../src/agent/budget-guard.service';
import { ModelPrices, priced } from '../../src/llm/model-prices.service';
import { fullModelName, splitModelName } from '../../src/llm/model-name';

describe('BUDGETS, MODEL_PRICES, ADMIN_KEYS and OTEL_* at start-up', () => {
  it('refuses budgets and admins for key names API_KEYS does not have', () => {
    const keys = { API_KEYS: 'alice:a,bob:b' };
    expect(() => loadConfig({ ...keys, BUDGETS: 'alcie=1usd/day' })).toThrow(/^BUDGETS=.*alcie is none/);
    expect(() => loadConfig({ ...keys, ADMIN_KEYS: 'root' })).toThrow(/^ADMIN_KEYS=.*root is none/);
    expect(
      loadConfig({ ...keys, BUDGETS: 'bob=1usd/day,*=2usd/day', ADMIN_KEYS: 'alice' }).adminKeys,
    ).toEqual(new Set(['alice']));
    expect(loadConfig({ BUDGETS: 'local=1usd/day' }).budgets.byKey.has('local')).toBe(true);
  });

  it('reads budgets per key and window, with * for every other key', () => {
    const { budgets } = loadConfig({
      API_KEYS: 'alice:a,bob:b',
      BUDGETS: 'alice=5usd/day,bob=2000000tokens/day,alice=100000tokens/hour,*=1.5usd/month',
    });
    expect(budgets.byKey.get('alice')).toEqual([
      { amount: 5, unit: 'usd', window: 'day' },
      { amount: 100000, unit: 'tokens', window: 'hour' },
    ]);
    expect(budgets.byKey.get('bob')).toEqual([{ amount: 2_000_000, unit: 'tokens', window: 'day' }]);
    expect(budgets.fallback).toEqual([{ amount: 1.5, unit: 'usd', window: 'month' }]);
    expect(loadConfig({}).budgets.byKey.size).toBe(0);
  });

  it.each([
    ['BUDGETS', 'alice=5eur/day'],
    ['BUDGETS', 'alice=5usd/week'],
    ['BUDGETS', 'alice=-1usd/day'],
    ['BUDGETS', 'alice=1.5tokens/day'],
    ['BUDGETS', 'alice=1usd/day,alice=2usd/day'],
    ['BUDGETS', '=1usd/day'],
    ['MODEL_PRICES', 'not json'],
    ['MODEL_PRICES', '[]'],
    ['MODEL_PRICES', '{"gpt-4o":{"input":1,"output":2}}'],
    ['MODEL_PRICES', '{"openai/gpt-4o":{"input":1}}'],
    ['MODEL_PRICES', '{"openai/gpt-4o":{"input":1,"output":-2}}'],
    ['MODEL_PRICES', '{"openai/gpt-4o":{"input":1,"output":2,"cached":1}}'],
    ['MODEL_PRICES', '{"openai/gpt-4o":{"input":"1","output":2}}'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318'],
    ['ADMIN_KEYS', 'a b'],
    // Without API_KEYS the only key is `local`.
    ['ADMIN_KEYS', 'alice'],
  ])('stops on %s=%s with a message naming the variable', (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [variable]: value })).toThrow(new RegExp(`^${variable}=.*accepts`));
  });

  it('stops on a bad OTLP protocol, and starts no tracing without an endpoint', () => {
    expect(() =>
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    ).toThrow(/^OTEL_EXPORTER_OTLP_PROTOCOL=.*accepts/);
    expect(loadConfig({ OTEL_SERVICE_NAME: 'x' }).tracing).toBeNull();
  });

  it('derives the traces URL from the general endpoint, or takes the signal one as given', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' }).tracing).toMatchObject({
      tracesUrl: 'http://c:4318/v1/traces',
      protocol: 'http/protobuf',
      serviceName: 'loopwright',
      captureContent: false,
    });
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://t.example/otlp',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=abc%20d,other=1',
        OTEL_SERVICE_NAME: 'agents',
      }).tracing,
    ).toMatchObject({
      tracesUrl: 'https://t.example/otlp',
      headers: { 'x-honeycomb-team': 'abc d', other: '1' },
      serviceName: 'agents',
    });
  });

  it('prices from MODEL_PRICES first (cached tokens at their rate), then the maintained table, else null', () => {
    const prices = new ModelPrices({
      modelPrices: { 'anthropic/claude-x': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
    });
    const usage = {
      promptTokens: 1_000_000,
      completionTokens: 100_000,
      cacheReadTokens: 600_000,
      cacheWriteTokens: 100_000,
    };
    expect(prices.costUsd('anthropic/claude-x', usage)).toBeCloseTo(
      0.3 * 3 + 0.6 * 0.3 + 0.1 * 3.75 + 0.1 * 15,
      12,
    );
    expect(priced({ input: 2, output: 10 }, { promptTokens: 1000, completionTokens: 100 })).toBeCloseTo(
      0.003,
      15,
    );
    // A well-known model is in @pydantic/genai-prices' table; a bare name is openai's.
    expect(prices.costUsd('gpt-4o', { promptTokens: 1_000_000, completionTokens: 0 })).toBeGreaterThan(0);
    expect(prices.costUsd('openai/gpt-4o', { promptTokens: 1000, completionTokens: 10 })).toBe(
      prices.costUsd('gpt-4o', { promptTokens: 1000, completionTokens: 10 }),
    );
    expect(prices.costUsd('openai/no-such-model-zz', { promptTokens: 1, completionTokens: 1 })).toBeNull();
    expect(splitModelName('openai/vendor/model')).toEqual({ provider: 'openai', model: 'vendor/model' });
    expect(splitModelName('claude-x')).toEqual({ provider: 'openai', model: 'claude-x' });
    expect(fullModelName('anthropic/claude-x')).toBe('anthropic/claude-x');
    expect(fullModelName('gpt-4o')).toBe('openai/gpt-4o');
  });

  it('counts the seconds to the next UTC hour, day and month', () => {
    const now = new Date('2026-02-28T23:59:30.000Z');
    expect(secondsUntilRollover('hour', now)).toBe(30);
    expect(secondsUntilRollover('day', now)).toBe(30);
    expect(secondsUntilRollover('month', now)).toBe(30);
    expect(secondsUntilRollover('month', new Date('2026-01-31T12:00:00Z'))).toBe(12 * 3600);
    expect(secondsUntilRollover('hour', new Date('2026-01-31T12:00:00Z'))).toBe(3600);
  });
});
