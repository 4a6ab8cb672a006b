import { loadConfig } from '../../src/config/app-config';
import type { ModelRequest } from '../../src/llm/model-provider';
import { OpenAiResponsesProvider } from '../../src/llm/providers/openai-responses/openai-responses.provider';
import { FakeResponses } from '../support/fake-responses';
import { collect, neverAborted, WEATHER_TOOL } from './llm-harness';

/**
 * The Responses API's reasoning items are opaque state like Anthropic's signatures: they count
 * against the call's one bound on it, STREAM_LIMITS.providerDataMaxChars — no bound of their own.
 */
describe('OpenAiResponsesProvider: reasoning items within the one bound on opaque provider state', () => {
  let fake: FakeResponses;

  beforeAll(async () => {
    fake = await FakeResponses.start();
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const provider = () =>
    new OpenAiResponsesProvider(
      loadConfig({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: fake.baseUrl, LLM_MAX_RETRIES: '0' }, '/tmp'),
    );
  const request: ModelRequest = {
    model: 'gpt-5-mini',
    messages: [{ role: 'user', content: 'Oslo?' }],
    tools: [WEATHER_TOOL],
    reasoning: 'high',
  };

  it('keeps one large item the call has room for (no separate per-item cap)', async () => {
    // Half of what the call may hold (2 MiB): twice what one item could hold on its own before.
    const encryptedChars = 2 * 1024 * 1024;
    fake.enqueue({
      kind: 'answer',
      reasoning: 'Think.',
      reasoningItems: 1,
      encryptedChars,
      calls: [{ name: 'weather', arguments: { location: 'Oslo' } }],
    });
    const result = await collect(provider().stream(request, neverAborted()));
    expect(result.error).toBeUndefined();
    expect(result.finish).toMatchObject({ finishReason: 'tool_calls' });
    expect(result.toolCalls).toHaveLength(1);
    expect(result.finish?.providerData?.items).toHaveLength(1);
  });
});
