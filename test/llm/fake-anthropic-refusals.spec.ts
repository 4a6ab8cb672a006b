import Anthropic, { BadRequestError } from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages/messages';
import { anthropicText, FakeAnthropic } from '../support/fake-anthropic';

/**
 * What the real Messages API refuses about text blocks, tool_use ids and thinking budgets, refused
 * by the fake too (through the official SDK), so a provider that sends it fails its tests.
 */
describe('FakeAnthropic refuses what the real Messages API refuses', () => {
  let fake: FakeAnthropic;
  let client: Anthropic;

  beforeAll(async () => {
    fake = await FakeAnthropic.start();
    client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: fake.baseUrl, maxRetries: 0 });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const use = (id: string) => ({ type: 'tool_use' as const, id, name: 'weather', input: {} });
  const result = (id: string) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'sunny' });

  function send(params: Partial<MessageCreateParamsNonStreaming>): Promise<unknown> {
    return client.messages.create({ model: 'claude-x', max_tokens: 4096, messages: [], ...params }).then(
      () => undefined,
      (e: unknown) => e,
    );
  }

  async function refused(params: Partial<MessageCreateParamsNonStreaming>): Promise<string> {
    const error = await send(params);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).error).toMatchObject({ error: { type: 'invalid_request_error' } });
    return (error as BadRequestError).message;
  }

  it.each([
    ['beside a tool_use', '\n\n'],
    ['alone', ' '],
  ])('refuses a whitespace-only text block %s', async (_where, text) => {
    const message = await refused({
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: [{ type: 'text', text }, use('toolu_1')] },
        { role: 'user', content: [result('toolu_1')] },
      ],
    });
    expect(message).toMatch(/text content blocks must contain non-whitespace text/);
  });

  it('refuses an empty text block, a whitespace-only system prompt and a message with no content', async () => {
    expect(await refused({ messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] })).toMatch(
      /must be non-empty/,
    );
    expect(
      await refused({ system: [{ type: 'text', text: '\n' }], messages: [{ role: 'user', content: 'hi' }] }),
    ).toMatch(/non-whitespace text/);
    expect(
      await refused({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [] },
          { role: 'user', content: 'again' },
        ],
      }),
    ).toMatch(/must have non-empty content/);
  });

  it('refuses a tool_use id used twice in one request', async () => {
    const message = await refused({
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: [use('call_7'), use('call_7')] },
        { role: 'user', content: [result('call_7'), result('call_7')] },
      ],
    });
    expect(message).toMatch(/`tool_use` ids must be unique/);
  });

  it('refuses a tool_use id outside the pattern, and a tool_result for no call of the turn before', async () => {
    expect(
      await refused({
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: [use('call.7')] },
          { role: 'user', content: [result('call.7')] },
        ],
      }),
    ).toMatch(/should match pattern/);
    expect(
      await refused({
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: [use('call_7')] },
          { role: 'user', content: [result('call_7'), result('call_8')] },
        ],
      }),
    ).toMatch(/corresponding `tool_use` block in the previous message/);
  });

  it.each([
    [1023, 4096, /greater than or equal to 1024/],
    [4096, 4096, /must be greater than `thinking.budget_tokens`/],
  ])('refuses budget_tokens %i with max_tokens %i', async (budget, maxTokens, pattern) => {
    const message = await refused({
      max_tokens: maxTokens,
      messages: [{ role: 'user', content: 'hi' }],
      thinking: { type: 'enabled', budget_tokens: budget },
    });
    expect(message).toMatch(pattern);
  });

  it('accepts a turn of only a tool_use, and text with a visible character', async () => {
    fake.enqueue(anthropicText('ok'));
    const error = await send({
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: [use('toolu_1')] },
        { role: 'user', content: [result('toolu_1'), { type: 'text', text: ' and? ' }] },
      ],
    });
    expect(error).toBeUndefined();
    expect(fake.refusals).toEqual([]);
  });
});
