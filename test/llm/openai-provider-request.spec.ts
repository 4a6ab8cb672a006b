import type { ModelMessage } from '../../src/llm/model-provider';
import { OpenAiProvider } from '../../src/llm/providers/openai/openai.provider';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { collect, llmConfig, neverAborted, userRequest, WEATHER_TOOL } from './llm-harness';

describe('OpenAiProvider requests', () => {
  let upstream: FakeUpstream;
  let provider: OpenAiProvider;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    provider = new OpenAiProvider(llmConfig(upstream.baseUrl));
  });
  afterEach(() => upstream.reset());
  afterAll(() => upstream.close());

  async function send(request = userRequest('hi')) {
    upstream.enqueue(text('ok'));
    const result = await collect(provider.stream(request, neverAborted()));
    expect(result.error).toBeUndefined();
    return upstream.requests[upstream.requests.length - 1];
  }

  it('streams with usage and sends neither tools nor tool_choice when there are no tools', async () => {
    const { body, headers } = await send(userRequest('hi', { toolChoice: 'none' }));
    expect(body).toEqual({
      model: 'test-model',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 16_384,
    });
    expect(headers.authorization).toBe('Bearer sk-test');
  });

  it('sends tools as functions, and tool_choice only when the request sets it', async () => {
    const withChoice = await send(userRequest('hi', { tools: [WEATHER_TOOL], toolChoice: 'none' }));
    expect(withChoice.body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'weather',
          description: WEATHER_TOOL.description,
          parameters: WEATHER_TOOL.parameters,
        },
      },
    ]);
    expect(withChoice.body.tool_choice).toBe('none');
    const withoutChoice = await send(userRequest('hi', { tools: [WEATHER_TOOL] }));
    expect(withoutChoice.body).not.toHaveProperty('tool_choice');
  });

  it('maps the conversation: assistant tool calls as function tool_calls, tool results with tool_call_id', async () => {
    const messages: ModelMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: null,
        toolCalls: [
          { id: 'call_1', name: 'weather', arguments: '{"location":"Paris"}' },
          {
            id: 'call_2',
            name: 'weather',
            arguments: '{"location":"Rome"}',
            extraContent: { google: { thought_signature: 'sig' } },
          },
        ],
      },
      { role: 'tool', toolCallId: 'call_1', content: 'sunny' },
      { role: 'tool', toolCallId: 'call_2', content: 'rain' },
      { role: 'assistant', content: 'Paris sunny, Rome rain.' },
      { role: 'user', content: 'Thanks' },
    ];
    const { body } = await send(userRequest('', { messages, tools: [WEATHER_TOOL] }));
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'weather', arguments: '{"location":"Paris"}' },
          },
          {
            id: 'call_2',
            type: 'function',
            function: { name: 'weather', arguments: '{"location":"Rome"}' },
            extra_content: { google: { thought_signature: 'sig' } },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      { role: 'tool', tool_call_id: 'call_2', content: 'rain' },
      { role: 'assistant', content: 'Paris sunny, Rome rain.' },
      { role: 'user', content: 'Thanks' },
    ]);
  });

  it('sends "{}" for arguments that are empty or not a JSON object, so strict servers accept the history', async () => {
    const messages: ModelMessage[] = [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'a', name: 'list', arguments: '' },
          { id: 'b', name: 'read', arguments: '{"path": "a.t' },
        ],
      },
      { role: 'tool', toolCallId: 'a', content: 'x' },
      { role: 'tool', toolCallId: 'b', content: 'invalid arguments' },
      { role: 'assistant', content: null },
    ];
    const { body } = await send(userRequest('', { messages }));
    const [, assistant, , , last] = body.messages as unknown as Array<Record<string, unknown>>;
    expect(assistant.content).toBeNull();
    expect(assistant.tool_calls).toEqual([
      { id: 'a', type: 'function', function: { name: 'list', arguments: '{}' } },
      { id: 'b', type: 'function', function: { name: 'read', arguments: '{}' } },
    ]);
    expect(last).toEqual({ role: 'assistant', content: '' });
  });

  it('streams a scripted tool call back as a complete call with its upstream id', async () => {
    upstream.enqueue(
      toolCalls([{ id: 'call_w', name: 'weather', arguments: { location: 'Paris' } }], {
        text: 'Checking.',
        pieces: 4,
      }),
    );
    const result = await collect(
      provider.stream(userRequest('hi', { tools: [WEATHER_TOOL] }), neverAborted()),
    );
    expect(result.text).toBe('Checking.');
    expect(result.finish).toEqual({
      type: 'finish',
      finishReason: 'tool_calls',
      usage: { promptTokens: 10, completionTokens: 5 },
      toolCalls: [{ id: 'call_w', name: 'weather', arguments: '{"location":"Paris"}' }],
      responseId: 'chatcmpl-fake0',
    });
    expect(result.events.filter((e) => e.type === 'tool_call_delta')).toHaveLength(5);
  });

  it('replaces an upstream tool-call id that the conversation already used', async () => {
    upstream.enqueue(toolCalls([{ id: 'call_1', name: 'weather', arguments: {} }]));
    const messages: ModelMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'weather', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'call_1', content: 'sunny' },
    ];
    const result = await collect(
      provider.stream(userRequest('', { messages, tools: [WEATHER_TOOL] }), neverAborted()),
    );
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0].id).not.toBe('call_1');
    expect(result.toolCalls[0].id).toMatch(/^call_/);
  });

  it('recovers <tool_call> text as a call when TOOL_CALL_TEXT_RECOVERY is on, and not when it is off', async () => {
    const written = 'On it.<tool_call>{"name": "weather", "arguments": {"location": "Paris"}}</tool_call>';
    const on = new OpenAiProvider(llmConfig(upstream.baseUrl, { TOOL_CALL_TEXT_RECOVERY: 'true' }));
    upstream.enqueue(text(written, { pieces: 7 }), text(written, { pieces: 7 }));
    const recovered = await collect(on.stream(userRequest('hi', { tools: [WEATHER_TOOL] }), neverAborted()));
    expect(recovered.text).toBe('On it.');
    expect(recovered.finish?.finishReason).toBe('stop');
    expect(recovered.toolCalls).toEqual([
      { id: expect.stringMatching(/^call_/), name: 'weather', arguments: '{"location":"Paris"}' },
    ]);
    const plain = await collect(
      provider.stream(userRequest('hi', { tools: [WEATHER_TOOL] }), neverAborted()),
    );
    expect(plain.text).toBe(written);
    expect(plain.toolCalls).toEqual([]);
  });
});
