import { loadConfig } from '../../src/config/app-config';
import type { ModelMessage, ModelRequest } from '../../src/llm/model-provider';
import { AnthropicProvider } from '../../src/llm/providers/anthropic/anthropic.provider';
import { anthropicText, FakeAnthropic } from '../support/fake-anthropic';
import { collect, neverAborted, WEATHER_TOOL } from './llm-harness';

type Block = Record<string, unknown> & { type: string };

/**
 * The `anthropic` provider keeps the Messages API's rules (through the official SDK, against the
 * fake that refuses what the real API refuses): no text block without visible text, one tool_use id
 * per call, a thinking budget that leaves the answer room, and a finishReason in the contract's
 * closed vocabulary.
 */
describe('AnthropicProvider within the Messages API rules', () => {
  let fake: FakeAnthropic;

  beforeAll(async () => {
    fake = await FakeAnthropic.start();
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const provider = (env: Record<string, string> = {}) =>
    new AnthropicProvider(
      loadConfig(
        { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: fake.baseUrl, LLM_MAX_RETRIES: '0', ...env },
        '/tmp',
      ),
    );
  const request = (messages: ModelMessage[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
    model: 'claude-test',
    messages,
    tools: [WEATHER_TOOL],
    ...extra,
  });
  const sent = (i = 0) => fake.requests[i].body.messages.map((m) => m.content as Block[]);

  describe('text without a visible character', () => {
    it('leaves out the whitespace-only text beside a tool_use, and sends the turn as its tool_use', async () => {
      fake.enqueue(anthropicText('Sunny.'));
      const result = await collect(
        provider().stream(
          request([
            { role: 'user', content: 'Weather?' },
            {
              role: 'assistant',
              content: '\n\n',
              toolCalls: [{ id: 'toolu_1', name: 'weather', arguments: '{"location":"Oslo"}' }],
            },
            { role: 'tool', toolCallId: 'toolu_1', content: 'sunny' },
          ]),
          neverAborted(),
        ),
      );
      expect(fake.refusals).toEqual([]);
      expect(result.error).toBeUndefined();
      expect(sent()[1].map((b) => b.type)).toEqual(['tool_use']);
    });

    it('leaves out an answer with nothing to show; the turns around it join, and an empty prompt is still a prompt', async () => {
      fake.enqueue(anthropicText('Hello.'));
      const result = await collect(
        provider().stream(
          request([
            { role: 'system', content: ' \n' },
            { role: 'user', content: 'Hi' },
            { role: 'assistant', content: '' },
            { role: 'user', content: 'Anyone?' },
            { role: 'assistant', content: ' \n\t' },
            { role: 'user', content: '' },
          ]),
          neverAborted(),
        ),
      );
      expect(fake.refusals).toEqual([]);
      expect(result.error).toBeUndefined();
      const body = fake.requests[0].body;
      expect(body.system).toBeUndefined();
      expect(body.messages.map((m) => m.role)).toEqual(['user']);
      expect(sent()[0].map((b) => b.text)).toEqual(['Hi', 'Anyone?', '(empty message)']);
    });
  });

  it('gives call ids that map to the same wire id (call.7, call_7) different tool_use ids, each paired with its result', async () => {
    fake.enqueue(anthropicText('Both sunny.'));
    const result = await collect(
      provider().stream(
        request([
          { role: 'user', content: 'Oslo and Rome?' },
          {
            role: 'assistant',
            content: null,
            toolCalls: [
              { id: 'call.7', name: 'weather', arguments: '{"location":"Oslo"}' },
              { id: 'call_7', name: 'weather', arguments: '{"location":"Rome"}' },
            ],
          },
          { role: 'tool', toolCallId: 'call_7', content: 'Rome: sunny' },
          { role: 'tool', toolCallId: 'call.7', content: 'Oslo: sunny' },
        ]),
        neverAborted(),
      ),
    );
    expect(fake.refusals).toEqual([]);
    expect(result.error).toBeUndefined();
    const uses = sent()[1];
    const results = sent()[2];
    expect(new Set(uses.map((b) => b.id)).size).toBe(2);
    const resultOf = (location: string) => {
      const id = uses.find((b) => (b.input as { location: string }).location === location)?.id;
      return results.find((b) => b.tool_use_id === id)?.content;
    };
    expect(resultOf('Oslo')).toBe('Oslo: sunny');
    expect(resultOf('Rome')).toBe('Rome: sunny');
  });

  describe('finishReason in the closed vocabulary', () => {
    it.each([
      ['end_turn', 'stop'],
      ['stop_sequence', 'stop'],
      ['max_tokens', 'length'],
      ['model_context_window_exceeded', 'length'],
      ['refusal', 'content_filter'],
      ['pause_turn', 'stop'],
      ['a_reason_added_next_year', 'stop'],
    ])('stop_reason %s is %s', async (stopReason, finishReason) => {
      fake.enqueue({ kind: 'answer', blocks: [{ type: 'text', text: 'x' }], stopReason });
      const result = await collect(
        provider().stream(request([{ role: 'user', content: 'go' }]), neverAborted()),
      );
      expect(result.finish?.finishReason).toBe(finishReason);
    });

    it('an unknown stop_reason on an answer with tool calls is tool_calls (the calls run)', async () => {
      fake.enqueue({
        kind: 'answer',
        blocks: [{ type: 'tool_use', name: 'weather', input: { location: 'Oslo' } }],
        stopReason: 'a_reason_added_next_year',
      });
      const result = await collect(
        provider().stream(request([{ role: 'user', content: 'go' }]), neverAborted()),
      );
      expect(result.finish?.finishReason).toBe('tool_calls');
      expect(result.toolCalls).toHaveLength(1);
    });
  });

  describe('the thinking budget leaves the answer at least half of max_tokens', () => {
    it.each([
      ['high', 16_384, 8192],
      ['high', 3000, 1500],
      ['medium', 40_000, 8192],
      ['low', 2048, 1024],
      ['high', 2047, undefined],
      ['low', 1500, undefined],
    ] as const)('%s with max_tokens %i thinks with budget %p', async (level, maxTokens, budget) => {
      fake.enqueue(anthropicText('ok'));
      const result = await collect(
        provider({ LLM_MAX_OUTPUT_TOKENS: String(maxTokens) }).stream(
          request([{ role: 'user', content: 'go' }], { reasoning: level }),
          neverAborted(),
        ),
      );
      expect(fake.refusals).toEqual([]);
      expect(result.error).toBeUndefined();
      const thinking = fake.requests[0].body.thinking;
      expect(thinking?.budget_tokens).toBe(budget);
      if (budget !== undefined) expect(budget * 2).toBeLessThanOrEqual(fake.requests[0].body.max_tokens);
    });
  });
});
