import { OpenAiProvider } from '../../src/llm/providers/openai/openai.provider';
import { FakeUpstream, raw } from '../support/fake-upstream';
import { chatChunk, SSE_DONE, sseData, usageChunk } from '../support/sse-chunks';
import { collect, llmConfig, neverAborted, userRequest } from './llm-harness';

/** Chat Completions reports cached prompt tokens and reasoning tokens in the usage's `*_details`. */
describe('OpenAiProvider usage', () => {
  let upstream: FakeUpstream;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
  });
  afterEach(() => upstream.reset());
  afterAll(() => upstream.close());

  function answer(usage: Record<string, unknown>): string {
    return (
      sseData(chatChunk({ role: 'assistant', content: 'ok' })) +
      sseData(chatChunk({}, 'stop')) +
      sseData({ ...usageChunk({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }), usage }) +
      SSE_DONE
    );
  }

  it('reads cached_tokens as cacheReadTokens and reasoning_tokens as reasoningTokens', async () => {
    upstream.enqueue(
      raw(
        answer({
          prompt_tokens: 1200,
          completion_tokens: 300,
          total_tokens: 1500,
          prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 256, audio_tokens: 0 },
        }),
      ),
    );
    const result = await collect(
      new OpenAiProvider(llmConfig(upstream.baseUrl)).stream(userRequest('hi'), neverAborted()),
    );
    expect(result.error).toBeUndefined();
    expect(result.finish?.usage).toEqual({
      promptTokens: 1200,
      completionTokens: 300,
      cacheReadTokens: 1024,
      reasoningTokens: 256,
    });
  });
});
