import { completeUsage } from '../../src/agent/usage-estimate';
import { addUsd, exactUsd, ModelPrices } from '../../src/llm/model-prices.service';

const request = {
  model: 'openai/gpt-4o',
  messages: [
    { role: 'system' as const, content: 'You are terse.' },
    { role: 'user' as const, content: 'Say hello to the whole world, politely.' },
  ],
  tools: [],
};

describe('a model call the provider did not report in full', () => {
  it('keeps a full report as it is, counting nothing', async () => {
    const reported = { promptTokens: 12, completionTokens: 3, cacheReadTokens: 2 };
    expect(await completeUsage(reported, { request, streamed: 'Hello.' })).toBe(reported);
  });

  it('estimates what is missing from what was sent and streamed, keeps what was reported, and says so', async () => {
    const none = await completeUsage(null, { request, streamed: 'Hello, world! Nice to meet you all.' });
    expect(none.estimated).toBe(true);
    expect(none.promptTokens).toBeGreaterThan(10);
    expect(none.completionTokens).toBeGreaterThan(5);

    // Only the prompt reported (a stream cut before its usage chunk came): the completion is counted.
    const part = await completeUsage(
      { promptTokens: 30, completionTokens: 0 },
      { request, streamed: 'Hello, world! Nice to meet you all.' },
    );
    expect(part).toEqual({ promptTokens: 30, completionTokens: none.completionTokens, estimated: true });
  });

  it('counts the prompt of a cancelled call that streamed nothing, and no completion', async () => {
    const silent = await completeUsage(null, { request, streamed: '' });
    expect(silent).toMatchObject({ completionTokens: 0, estimated: true });
    expect(silent.promptTokens).toBeGreaterThan(0);
  });
});

describe('money', () => {
  it('adds costs exactly and prices to the nano-dollar', () => {
    expect(0.1 + 0.005).not.toBe(0.105);
    expect(addUsd(0.1, 0.005)).toBe(0.105);
    expect(addUsd(null, 0.2)).toBe(0.2);
    expect(addUsd(0.3, null)).toBe(0.3);
    expect(addUsd(null, null)).toBeNull();
    expect(exactUsd(0.1 * 3)).toBe(0.3);
    const prices = new ModelPrices({ modelPrices: { 'openai/m': { input: 0.15, output: 0.6 } } });
    // 7 × 0.15 / 1e6 is 0.0000010500000000000001 in floating point.
    expect(prices.costUsd('openai/m', { promptTokens: 7, completionTokens: 0 })).toBe(0.00000105);
  });
});
