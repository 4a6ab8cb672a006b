import OpenAI, { BadRequestError } from 'openai';
import { OpenAiProvider } from '../../src/llm/providers/openai/openai.provider';
import { FakeUpstream, text } from '../support/fake-upstream';
import { collect, llmConfig, neverAborted, userRequest } from './llm-harness';

describe('LLM_MAX_OUTPUT_TOKENS on Chat Completions', () => {
  let upstream: FakeUpstream;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
  });
  afterEach(() => upstream.reset());
  afterAll(() => upstream.close());

  it('FakeUpstream refuses max_tokens from an OpenAI reasoning model, as OpenAI does', async () => {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: upstream.baseUrl, maxRetries: 0 });
    const error: unknown = await client.chat.completions
      .create({ model: 'o4-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).message).toMatch(
      /'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead/,
    );
    expect((error as BadRequestError).param).toBe('max_tokens');
  });

  it('limits every call: max_tokens, or max_completion_tokens for an OpenAI reasoning model', async () => {
    const provider = new OpenAiProvider(llmConfig(upstream.baseUrl, { LLM_MAX_OUTPUT_TOKENS: '321' }));
    for (const model of [
      'gpt-4.1-mini',
      'qwen2.5-coder:14b',
      'o4-mini',
      'gpt-5',
      'openai/gpt-5-mini',
      'gpt-5-chat-latest',
    ]) {
      upstream.enqueue(text('ok'));
      const result = await collect(provider.stream(userRequest('hi', { model }), neverAborted()));
      expect(result.error).toBeUndefined();
    }
    upstream.enqueue(text('ok'));
    await collect(provider.stream(userRequest('hi', { maxOutputTokens: 50 }), neverAborted()));
    const sent = upstream.requests.map(({ body }) => [
      body.model,
      (body as { max_tokens?: number }).max_tokens,
      (body as { max_completion_tokens?: number }).max_completion_tokens,
    ]);
    expect(sent).toEqual([
      ['gpt-4.1-mini', 321, undefined],
      ['qwen2.5-coder:14b', 321, undefined],
      ['o4-mini', undefined, 321],
      ['gpt-5', undefined, 321],
      ['openai/gpt-5-mini', undefined, 321],
      ['gpt-5-chat-latest', undefined, 321],
      ['test-model', 50, undefined],
    ]);
  });
});
