import { loadConfig } from '../../src/config/app-config';
import { ModelError, type ModelMessage, type ModelRequest } from '../../src/llm/model-provider';
import { AnthropicProvider } from '../../src/llm/providers/anthropic/anthropic.provider';
import {
  anthropicFixture,
  anthropicStatus,
  anthropicText,
  anthropicToolUse,
  FakeAnthropic,
  type AnswerBlock,
} from '../support/fake-anthropic';
import { collect, neverAborted, WEATHER_TOOL } from './llm-harness';

/** The `anthropic` provider over real HTTP through the official SDK, against the fake Messages API. */
describe('AnthropicProvider', () => {
  let fake: FakeAnthropic;

  beforeAll(async () => {
    fake = await FakeAnthropic.start();
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const provider = (env: Record<string, string> = {}) =>
    new AnthropicProvider(
      loadConfig(
        { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: fake.baseUrl, LLM_MAX_RETRIES: '1', ...env },
        '/tmp',
      ),
    );
  const request = (messages: ModelMessage[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
    model: 'claude-test',
    messages,
    tools: [WEATHER_TOOL],
    ...extra,
  });

  describe('replays the recorded Anthropic streams', () => {
    it.each([
      [
        'anthropic-sonnet4-text-then-tool-use.sse',
        "I'll check the current weather in Paris for you.",
        { id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather', arguments: '{"location": "Paris"}' },
        { promptTokens: 377, completionTokens: 65 },
      ],
      [
        'anthropic-sonnet45-text-then-tool-use-no-args.sse',
        "I'll update the issue list for you.",
        { id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', arguments: '' },
        { promptTokens: 565, completionTokens: 48 },
      ],
      [
        'anthropic-sonnet45-tool-use-escaped-json.sse',
        '',
        { id: 'toolu_01Cr31vcGoeeRgi3Eo5Ds8qN', name: 'website_update' },
        { promptTokens: 912, completionTokens: 118 },
      ],
    ])('%s: text, the tool call and tool_use as tool_calls', async (file, text, call, usage) => {
      fake.enqueue(anthropicFixture(file));
      const result = await collect(
        provider().stream(request([{ role: 'user', content: 'go' }]), neverAborted()),
      );
      expect(result.error).toBeUndefined();
      expect(result.text).toBe(text);
      expect(result.toolCalls).toHaveLength(1);
      expect(result.toolCalls[0]).toMatchObject(call);
      expect(result.finish).toMatchObject({
        finishReason: 'tool_calls',
        usage: { ...usage, cacheReadTokens: 0, cacheWriteTokens: 0 },
      });
    });
  });

  it('sends the system prompt apart, tool results in the user turn right after their calls, and LLM_HEADERS', async () => {
    fake.enqueue(anthropicText('Both are sunny.'));
    const result = await collect(
      provider({ LLM_HEADERS: '{"X-Gateway":"yes"}', LLM_MAX_OUTPUT_TOKENS: '2000' }).stream(
        request([
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [
              { id: 'toolu_a', name: 'weather', arguments: '{"location":"Paris"}' },
              { id: 'toolu_b', name: 'weather', arguments: '{"location":"Rome"}' },
            ],
          },
          { role: 'tool', toolCallId: 'toolu_a', content: 'sunny' },
          { role: 'tool', toolCallId: 'toolu_b', content: 'sunny too' },
        ]),
        neverAborted(),
      ),
    );
    expect(result.error).toBeUndefined();
    expect(fake.refusals).toEqual([]);
    expect(result.finish).toMatchObject({ finishReason: 'stop' });
    const { body, headers } = fake.requests[0];
    expect(headers['x-gateway']).toBe('yes');
    expect(body.max_tokens).toBe(2000);
    expect(body.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(body.messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_a', content: 'sunny' },
      {
        type: 'tool_result',
        tool_use_id: 'toolu_b',
        content: 'sunny too',
        cache_control: { type: 'ephemeral' },
      },
    ]);
    expect(body.tools?.[0]).toMatchObject({ name: 'weather', cache_control: { type: 'ephemeral' } });
  });

  it('streams parallel tool calls with their arguments, complete on finish', async () => {
    fake.enqueue(
      anthropicToolUse([
        { name: 'weather', input: { location: 'Paris' } },
        { name: 'weather', input: { location: 'Rome' } },
      ]),
    );
    const result = await collect(
      provider().stream(request([{ role: 'user', content: 'go' }]), neverAborted()),
    );
    expect(result.events.some((e) => e.type === 'tool_call_delta')).toBe(true);
    expect(result.toolCalls.map((c) => JSON.parse(c.arguments) as unknown)).toEqual([
      { location: 'Paris' },
      { location: 'Rome' },
    ]);
    expect(result.finish?.finishReason).toBe('tool_calls');
  });

  it('thinks when asked, streams the thinking as reasoning, and sends the signed blocks back unchanged', async () => {
    fake.enqueue(
      anthropicToolUse([{ name: 'weather', input: { location: 'Oslo' } }], {
        thinking: 'The user wants Oslo.',
        redacted: true,
      }),
    );
    const first = await collect(
      provider().stream(
        request([{ role: 'user', content: 'Oslo?' }], { reasoning: 'medium' }),
        neverAborted(),
      ),
    );
    expect(fake.requests[0].body.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
    expect(first.reasoning).toBe('The user wants Oslo.');
    expect(first.text).toBe('');
    const data = first.finish?.providerData;
    expect(data?.provider).toBe('anthropic');
    expect(data?.items).toEqual([
      {
        type: 'thinking',
        thinking: 'The user wants Oslo.',
        signature: fake.signature('The user wants Oslo.'),
      },
      { type: 'redacted_thinking', data: expect.any(String) as string },
    ]);

    fake.enqueue(anthropicText('Cold.'));
    const call = first.toolCalls[0];
    const second = await collect(
      provider().stream(
        request(
          [
            { role: 'user', content: 'Oslo?' },
            { role: 'assistant', content: null, toolCalls: [call], providerData: data },
            { role: 'tool', toolCallId: call.id, content: '-3 °C' },
          ],
          { reasoning: 'medium' },
        ),
        neverAborted(),
      ),
    );
    expect(fake.refusals).toEqual([]);
    expect(second.text).toBe('Cold.');
    const sentBack = fake.requests[1].body.messages[1].content as AnswerBlock[];
    expect(sentBack.slice(0, 2)).toEqual(data?.items);
  });

  it('continues a tool loop another provider began without thinking, rather than be refused', async () => {
    fake.enqueue(anthropicText('Cold.'));
    const result = await collect(
      provider().stream(
        request(
          [
            { role: 'user', content: 'Oslo?' },
            {
              role: 'assistant',
              content: null,
              toolCalls: [{ id: 'call_1', name: 'weather', arguments: '{}' }],
              providerData: {
                provider: 'openai-responses',
                items: [{ type: 'reasoning', encrypted_content: 'x' }],
              },
            },
            { role: 'tool', toolCallId: 'call_1', content: '-3 °C' },
          ],
          { reasoning: 'high' },
        ),
        neverAborted(),
      ),
    );
    expect(result.error).toBeUndefined();
    expect(fake.refusals).toEqual([]);
    expect(fake.requests[0].body.thinking).toBeUndefined();
  });

  it('opens a conversation whose older part a summary stands in for with a user turn, rather than be refused', async () => {
    fake.enqueue(anthropicText('Done.'));
    const result = await collect(
      provider().stream(
        request([
          { role: 'system', content: 'You are helpful.' },
          { role: 'system', content: 'Summary of the earlier conversation: the user wants notes.md.' },
          { role: 'assistant', content: 'I wrote notes.md.' },
          { role: 'user', content: 'Thanks. Anything else?' },
        ]),
        neverAborted(),
      ),
    );
    expect(result.error).toBeUndefined();
    expect(fake.refusals).toEqual([]);
    const sent = fake.requests[0].body;
    expect(JSON.stringify(sent.system)).toContain('Summary of the earlier conversation');
    expect(sent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  });

  it("sends another provider's call ids in the pattern the API takes, the same in the call and its result", async () => {
    fake.enqueue(anthropicText('Done.'));
    const result = await collect(
      provider().stream(
        request([
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: null,
            toolCalls: [{ id: 'functions.weather:0', name: 'weather', arguments: '{}' }],
          },
          { role: 'tool', toolCallId: 'functions.weather:0', content: 'sunny' },
        ]),
        neverAborted(),
      ),
    );
    expect(fake.refusals).toEqual([]);
    expect(result.text).toBe('Done.');
  });

  it.each([
    ['max_tokens', 'length'],
    ['refusal', 'content_filter'],
    ['stop_sequence', 'stop'],
  ])('maps stop_reason %s to %s', async (stopReason, finishReason) => {
    fake.enqueue({ kind: 'answer', blocks: [{ type: 'text', text: 'x' }], stopReason });
    const result = await collect(
      provider().stream(request([{ role: 'user', content: 'go' }]), neverAborted()),
    );
    expect(result.finish?.finishReason).toBe(finishReason);
  });

  it("fails 529 overloaded retryable after one request: retries are ModelProviders' (retry-policy.spec)", async () => {
    fake.enqueue(anthropicStatus(529, 'overloaded_error', 'Overloaded'), anthropicText('not asked'));
    const failed = await collect(
      provider().stream(request([{ role: 'user', content: 'go' }]), neverAborted()),
    );
    expect(failed.error).toBeInstanceOf(ModelError);
    expect(failed.error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true, status: 529 });
    expect(fake.requests).toHaveLength(1);
  });

  it('fails a refused request as UPSTREAM_BAD_REQUEST, not retryable', async () => {
    const result = await collect(
      provider().stream(
        request([
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: null,
            toolCalls: [{ id: 'toolu_x', name: 'weather', arguments: '{}' }],
          },
          { role: 'user', content: 'never answered the call' },
        ]),
        neverAborted(),
      ),
    );
    expect(result.error).toMatchObject({ code: 'UPSTREAM_BAD_REQUEST', retryable: false, status: 400 });
  });
});
