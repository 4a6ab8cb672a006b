import { readdirSync } from 'node:fs';
import { OpenAiProvider } from '../../src/llm/providers/openai/openai.provider';
import type { ModelToolCall, Usage } from '../../src/llm/model-provider';
import { DEFAULT_FIXTURES_DIR, FakeUpstream, fixture } from '../support/fake-upstream';
import { collect, type Collected, llmConfig, neverAborted, userRequest, WEATHER_TOOL } from './llm-harness';

/**
 * Every recorded upstream stream in test/fixtures/upstream, replayed byte for byte through the real
 * SDK over real HTTP into OpenAiProvider, with what it must come out as. See SOURCES.md for each quirk.
 */
interface Expected {
  text: string;
  toolCalls: Array<Omit<ModelToolCall, 'id'> & { id: string | RegExp }>;
  finishReason: string;
  usage: Usage;
  reasoning?: RegExp;
  also?: (result: Collected) => void;
}

const noUsage = { promptTokens: 0, completionTokens: 0 };

const EXPECTED: Record<string, Expected> = {
  'alibaba-qwen3max-tool-call-empty-id-continuations.sse': {
    text: '',
    toolCalls: [
      { id: 'call_eee11723464a4b9eb8cee71d', name: 'weather', arguments: '{"location": "San Francisco"}' },
    ],
    finishReason: 'tool_calls',
    usage: { promptTokens: 295, completionTokens: 22, cacheReadTokens: 0 },
  },
  'anthropic-openai-compat-tool-call-index-starts-at-1.sse': {
    text: 'Reading it.',
    toolCalls: [{ id: 'toolu_sanitized', name: 'read_file', arguments: '{"path": "a.txt"}' }],
    finishReason: 'tool_calls',
    usage: noUsage,
  },
  'anthropic-sonnet4-text-then-tool-use.sse': {
    text: "I'll check the current weather in Paris for you.",
    toolCalls: [
      { id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather', arguments: '{"location": "Paris"}' },
    ],
    finishReason: 'tool_use',
    usage: { promptTokens: 377, completionTokens: 65, cacheReadTokens: 0, cacheWriteTokens: 0 },
  },
  'anthropic-sonnet45-text-then-tool-use-no-args.sse': {
    text: "I'll update the issue list for you.",
    toolCalls: [{ id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', arguments: '' }],
    finishReason: 'tool_use',
    usage: { promptTokens: 565, completionTokens: 48, cacheReadTokens: 0, cacheWriteTokens: 0 },
  },
  'anthropic-sonnet45-tool-use-escaped-json.sse': {
    text: '',
    toolCalls: [
      {
        id: 'toolu_01Cr31vcGoeeRgi3Eo5Ds8qN',
        name: 'website_update',
        arguments:
          '{"website_path": "/home/user/pace-landing", "tasks": [{"description": "Today you post every run to Strava, but Strava does not answer the question: \\"What should I do next after this run?\\". It is a great log, but it is not adaptive.", "type": "feature", "passes": false}]}',
      },
    ],
    finishReason: 'tool_use',
    usage: { promptTokens: 912, completionTokens: 118, cacheReadTokens: 0, cacheWriteTokens: 0 },
    also: ({ toolCalls }) => {
      const args = JSON.parse(toolCalls[0].arguments) as { tasks: Array<{ description: string }> };
      expect(args.tasks[0].description).toContain('question: "What should I do next after this run?".');
    },
  },
  'azure-openai-model-router-text-placeholder-first-chunk.sse': {
    text: 'Capital of Denmark.',
    toolCalls: [],
    finishReason: 'stop',
    usage: { promptTokens: 15, completionTokens: 78, cacheReadTokens: 0, reasoningTokens: 64 },
  },
  'deepseek-reasoner-reasoning-then-tool-call.sse': {
    text: '',
    toolCalls: [
      { id: 'call_00_ioIn7yN9p1ZOMNpDLwd4MgAF', name: 'weather', arguments: '{"location": "San Francisco"}' },
    ],
    finishReason: 'tool_calls',
    usage: { promptTokens: 339, completionTokens: 83, cacheReadTokens: 320, reasoningTokens: 39 },
    reasoning: /^The user is asking for the weather in San Francisco\. I need to use the weather tool/,
  },
  'gemini-openai-compat-tool-call-no-index-empty-id.sse': {
    text: '',
    toolCalls: [
      { id: /^call_[0-9a-f]{24}$/, name: 'get_current_weather', arguments: '{"location":"Tokyo"}' },
    ],
    finishReason: 'tool_calls',
    usage: noUsage,
  },
  'groq-llama33-tool-call-single-chunk.sse': {
    text: '',
    toolCalls: [{ id: 'tk85n1k4m', name: 'weather', arguments: '{}' }],
    finishReason: 'tool_calls',
    usage: { promptTokens: 210, completionTokens: 15 },
  },
  'llamacpp-qwen3coder-tool-call-timings-verbose.sse': {
    text: '',
    toolCalls: [
      { id: 'v2dhUNilw8En9qFqCAHEz5Ow0GnQsclc', name: 'run_command', arguments: '{"command":"pwd"}' },
    ],
    finishReason: 'tool_calls',
    usage: noUsage,
  },
  'mistral-api-glm-incremental-tool-call.sse': {
    text: '',
    toolCalls: [
      {
        id: 'chatcmpl-tool-9f149c74c42f265b',
        name: 'webSearchTool',
        arguments: '{"query": "current Berlin weather"}',
      },
    ],
    finishReason: 'tool_calls',
    usage: { promptTokens: 171, completionTokens: 14, cacheReadTokens: 128 },
  },
  'mistral-small-tool-call-no-index.sse': {
    text: '',
    toolCalls: [{ id: 'gSIMJiOkT', name: 'weather', arguments: '{"location": "San Francisco"}' }],
    finishReason: 'tool_calls',
    usage: { promptTokens: 124, completionTokens: 22 },
  },
  'ollama-qwen25coder-parallel-tool-calls.sse': {
    text: '',
    toolCalls: [
      { id: 'call_wteop8bt', name: 'run_command', arguments: '{"command":"ls"}' },
      { id: 'call_rk2xye1l', name: 'run_command', arguments: '{"command":"ls -l"}' },
    ],
    finishReason: 'tool_calls',
    usage: noUsage,
  },
  'openai-gpt4o-content-then-tool-call.sse': {
    text: 'PRE_TOOL',
    toolCalls: [{ id: 'call_NZa7xqfefoaMI2YYHowVXVlU', name: 'weather', arguments: '{}' }],
    finishReason: 'tool_calls',
    usage: { promptTokens: 58, completionTokens: 12, cacheReadTokens: 0, reasoningTokens: 0 },
  },
  'openai-gpt4o-finish-length.sse': {
    text: '{"',
    toolCalls: [],
    finishReason: 'length',
    usage: { promptTokens: 79, completionTokens: 1, reasoningTokens: 0 },
  },
  'openai-gpt4o-parallel-tool-calls.sse': {
    text: '',
    toolCalls: [
      {
        id: 'call_JMW1whyEaYG438VE1OIflxA2',
        name: 'GetWeatherArgs',
        arguments: '{"city": "Edinburgh", "country": "GB", "units": "c"}',
      },
      {
        id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou',
        name: 'get_stock_price',
        arguments: '{"ticker": "AAPL", "exchange": "NASDAQ"}',
      },
    ],
    finishReason: 'tool_calls',
    usage: { promptTokens: 149, completionTokens: 60, reasoningTokens: 0 },
  },
  'openai-gpt4o-single-tool-call.sse': {
    text: '',
    toolCalls: [
      {
        id: 'call_c91SqDXlYFuETYv8mUHzz6pp',
        name: 'GetWeatherArgs',
        arguments: '{"city":"Edinburgh","country":"UK","units":"c"}',
      },
    ],
    finishReason: 'tool_calls',
    usage: { promptTokens: 76, completionTokens: 24, reasoningTokens: 0 },
  },
  'openai-gpt4o-text.sse': {
    text: "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app.",
    toolCalls: [],
    finishReason: 'stop',
    usage: { promptTokens: 14, completionTokens: 30, reasoningTokens: 0 },
  },
  'vllm-llama31-tool-call-continuous-usage.sse': {
    text: '',
    toolCalls: [
      {
        id: 'chatcmpl-tool-b3b307239370432d9910d4b79b4dbbaa',
        name: 'searchGoogle',
        arguments: '{"query": "latest news on ai"}',
      },
    ],
    finishReason: 'tool_calls',
    usage: { promptTokens: 226, completionTokens: 20 },
  },
  'vllm-qwen-tool-call-name-without-arguments.sse': {
    text: '',
    toolCalls: [
      {
        id: 'chatcmpl-tool-ca99dda515524c6abe47d1ea22813507',
        name: 'run_command',
        arguments: '{"command": "ls"}',
      },
    ],
    finishReason: 'tool_calls',
    usage: noUsage,
  },
};

const FIXTURES = readdirSync(process.env.FIXTURES_DIR ?? DEFAULT_FIXTURES_DIR)
  .filter((name) => name.endsWith('.sse'))
  .sort();

describe('replaying recorded upstream streams through OpenAiProvider', () => {
  let upstream: FakeUpstream;
  let provider: OpenAiProvider;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    provider = new OpenAiProvider(llmConfig(upstream.baseUrl));
  });
  afterEach(() => upstream.reset());
  afterAll(() => upstream.close());

  it('has an expected outcome for every fixture file, and a file for every expected outcome', () => {
    expect(FIXTURES.length).toBeGreaterThanOrEqual(20);
    expect(Object.keys(EXPECTED).sort()).toEqual(FIXTURES);
  });

  describe.each(FIXTURES)('%s', (name) => {
    const expected = EXPECTED[name];

    async function replay(appendDone: boolean): Promise<Collected> {
      upstream.enqueue(fixture(name, { appendDone }));
      return collect(provider.stream(userRequest('go', { tools: [WEATHER_TOOL] }), neverAborted()));
    }

    it('yields its text, tool calls, finish reason as received and usage', async () => {
      const result = await replay(false);
      expect(result.error).toBeUndefined();
      expect(result.text).toBe(expected.text);
      expect(result.finish?.finishReason).toBe(expected.finishReason);
      expect(result.finish?.usage).toEqual(expected.usage);
      expect(result.toolCalls).toHaveLength(expected.toolCalls.length);
      expected.toolCalls.forEach((call, i) => {
        const actual = result.toolCalls[i];
        expect(actual.name).toBe(call.name);
        expect(actual.arguments).toBe(call.arguments);
        if (typeof call.id === 'string') expect(actual.id).toBe(call.id);
        else expect(actual.id).toMatch(call.id);
      });
      expected.also?.(result);
    });

    it('keeps reasoning out of the text and ends with exactly one finish event, last', async () => {
      const result = await replay(false);
      if (expected.reasoning) expect(result.reasoning).toMatch(expected.reasoning);
      else expect(result.reasoning).toBe('');
      if (result.reasoning !== '') expect(result.text).not.toContain(result.reasoning.slice(0, 20));
      expect(result.events.filter((e) => e.type === 'finish')).toHaveLength(1);
      expect(result.events[result.events.length - 1].type).toBe('finish');
    });

    it('gives the same outcome with data: [DONE] appended', async () => {
      const [plain, withDone] = [await replay(false), await replay(true)];
      expect(withDone.error).toBeUndefined();
      expect(withDone.text).toBe(plain.text);
      expect(withDone.finish?.finishReason).toBe(plain.finish?.finishReason);
      expect(withDone.finish?.usage).toEqual(plain.finish?.usage);
      expect(withDone.toolCalls.map(({ name, arguments: args }) => ({ name, args }))).toEqual(
        plain.toolCalls.map(({ name, arguments: args }) => ({ name, args })),
      );
    });
  });
});
