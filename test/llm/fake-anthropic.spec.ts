import Anthropic, { BadRequestError } from '@anthropic-ai/sdk';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages/messages';
import { anthropicText, anthropicToolUse, FakeAnthropic } from '../support/fake-anthropic';

/**
 * The fake Anthropic upstream proven against the official SDK: the SDK parses what it streams, and
 * it refuses, with the real API's 400, the conversations the real API refuses.
 */
describe('FakeAnthropic, read by the official SDK', () => {
  let fake: FakeAnthropic;
  let client: Anthropic;

  beforeAll(async () => {
    fake = await FakeAnthropic.start();
    client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: fake.baseUrl, maxRetries: 0 });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const tools = [
    { name: 'weather', description: 'Weather', input_schema: { type: 'object' as const, properties: {} } },
  ];

  it('streams thinking, text and a tool call the SDK assembles into a message', async () => {
    fake.enqueue(
      anthropicToolUse([{ name: 'weather', input: { city: 'Paris' } }], {
        thinking: 'Need the weather.',
        text: 'Checking.',
      }),
    );
    const message = await client.messages
      .stream({
        model: 'claude-x',
        max_tokens: 4096,
        messages: [{ role: 'user', content: 'Weather?' }],
        tools,
        thinking: { type: 'enabled', budget_tokens: 1024 },
      })
      .finalMessage();
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(message.content[0]).toMatchObject({
      thinking: 'Need the weather.',
      signature: fake.signature('Need the weather.'),
    });
    expect(message.content[2]).toMatchObject({ name: 'weather', input: { city: 'Paris' } });
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  async function refusal(messages: MessageParam[], thinking = false): Promise<BadRequestError> {
    const error: unknown = await client.messages
      .create({
        model: 'claude-x',
        max_tokens: 4096,
        messages,
        tools,
        ...(thinking ? { thinking: { type: 'enabled' as const, budget_tokens: 1024 } } : {}),
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(BadRequestError);
    const bad = error as BadRequestError;
    expect(bad.status).toBe(400);
    expect(bad.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    return bad;
  }

  const use = { type: 'tool_use' as const, id: 'toolu_1', name: 'weather', input: {} };
  const result = { type: 'tool_result' as const, tool_use_id: 'toolu_1', content: 'sunny' };

  it('refuses a tool_use without its tool_result in the next user turn', async () => {
    const bad = await refusal([
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: [use] },
      { role: 'user', content: 'and?' },
    ]);
    expect(bad.message).toMatch(
      /tool_use` ids were found without `tool_result` blocks immediately after: toolu_1/,
    );
  });

  it('refuses a tool_result whose tool_use is not in the turn before', async () => {
    await refusal([
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'Hm.' },
      { role: 'user', content: [result] },
    ]);
  });

  it('refuses a thinking block whose text was changed', async () => {
    const bad = await refusal(
      [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: [{ type: 'thinking', thinking: 'changed', signature: fake.signature('original') }, use],
        },
        { role: 'user', content: [result] },
      ],
      true,
    );
    expect(bad.message).toMatch(/Invalid `signature` in `thinking` block/);
  });

  it('refuses a tool loop whose thinking block was dropped while thinking is on', async () => {
    const bad = await refusal(
      [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: [use] },
        { role: 'user', content: [result] },
      ],
      true,
    );
    expect(bad.message).toMatch(/must start with a thinking block/);
  });

  it('accepts the same loop with its thinking block sent back unchanged, and reads the cache it wrote', async () => {
    const system = [
      { type: 'text' as const, text: 'Be brief. '.repeat(50), cache_control: { type: 'ephemeral' as const } },
    ];
    fake.enqueue(anthropicText('first'), anthropicText('second'));
    const first = await client.messages.create({
      model: 'claude-x',
      max_tokens: 4096,
      system,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?', cache_control: { type: 'ephemeral' } }] },
      ],
      tools,
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    const second = await client.messages.create({
      model: 'claude-x',
      max_tokens: 4096,
      system,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        {
          role: 'assistant',
          content: [{ type: 'thinking', thinking: 'Need it.', signature: fake.signature('Need it.') }, use],
        },
        { role: 'user', content: [{ ...result, cache_control: { type: 'ephemeral' } }] },
      ],
      tools,
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    expect(fake.refusals).toEqual([]);
    // The tools and the system prompt are the prefix the first call wrote.
    expect(second.usage.cache_read_input_tokens).toBeGreaterThan(0);
    expect(second.content[0]).toMatchObject({ type: 'text', text: 'second' });
  });
});
