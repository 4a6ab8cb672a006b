import { anthropicText, anthropicToolUse, FakeAnthropic } from '../support/fake-anthropic';
import { FakeResponses, responsesCalls, responsesText } from '../support/fake-responses';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { openStream, type StreamEvent } from '../support/sse-client';

/** The run's `invoke_agent` spans and the spans under them. */
function spansOfRun(collector: OtlpReceiver, runId: string): { run: ReceivedSpan[]; chats: ReceivedSpan[] } {
  const run = collector.named('invoke_agent').filter((s) => s.attributes['loopwright.run.id'] === runId);
  const ids = new Set(run.map((s) => s.spanId));
  const chats = collector.spans
    .filter((s) => ids.has(s.parentSpanId) && s.name.startsWith('chat '))
    .sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1));
  return { run, chats };
}

/** The attributes the convention gives a model call's usage, from a step's `usage` as the run reports it. */
function usageAttributes(usage: Record<string, unknown>): Record<string, unknown> {
  const named: [string, string][] = [
    ['promptTokens', 'gen_ai.usage.input_tokens'],
    ['completionTokens', 'gen_ai.usage.output_tokens'],
    ['cacheReadTokens', 'gen_ai.usage.cache_read.input_tokens'],
    ['cacheWriteTokens', 'gen_ai.usage.cache_creation.input_tokens'],
    ['reasoningTokens', 'gen_ai.usage.reasoning.output_tokens'],
  ];
  return Object.fromEntries(named.filter(([k]) => usage[k] !== undefined).map(([k, a]) => [a, usage[k]]));
}

const portOf = (url: string) => Number(new URL(url).port);

/**
 * The GenAI semantic conventions (model/gen-ai/spans.yaml) on every provider: `invoke_agent` and
 * `chat` spans with the provider's convention name, the bare model it was sent, the stream flag,
 * where the request went, the answer's id, every token count the provider reported, the output
 * bound — and content only with capture on, in the convention's message shapes, bounded.
 */
describe('GenAI span attributes on every provider (e2e)', () => {
  let openai: FakeUpstream;
  let anthropic: FakeAnthropic;
  let responses: FakeResponses;
  let collector: OtlpReceiver;
  let chatApp: TestApp;
  let responsesApp: TestApp;

  beforeAll(async () => {
    [openai, anthropic, responses, collector] = await Promise.all([
      FakeUpstream.start(),
      FakeAnthropic.start(),
      FakeResponses.start(),
      OtlpReceiver.start(),
    ]);
    const tracing = {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      LLM_MAX_OUTPUT_TOKENS: '2048',
      LLM_MAX_RETRIES: '0',
    };
    chatApp = await startApp({
      ...tracing,
      OPENAI_BASE_URL: openai.baseUrl,
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: anthropic.baseUrl,
    });
    // The Responses API is reached through the openai provider's base URL: an app of its own.
    responsesApp = await startApp({ ...tracing, OPENAI_BASE_URL: responses.baseUrl });
  });
  afterAll(async () => {
    await Promise.all([chatApp.close(), responsesApp.close()]);
    await Promise.all([openai.close(), anthropic.close(), responses.close(), collector.close()]);
  });

  const cases = [
    {
      provider: 'openai',
      model: 'openai/gpt-test',
      app: () => chatApp,
      baseUrl: () => openai.baseUrl,
      script: () =>
        openai.enqueue(
          toolCalls([{ id: 'l1', name: 'list_directory', arguments: { path: '.' } }]),
          text('Listed.'),
        ),
      conventionName: 'openai',
      responseId: /^chatcmpl-/,
      reported: [] as string[],
    },
    {
      provider: 'openai-responses',
      model: 'openai-responses/gpt-test',
      app: () => responsesApp,
      baseUrl: () => responses.baseUrl,
      script: () =>
        responses.enqueue(
          responsesCalls([{ name: 'list_directory', arguments: { path: '.' } }], 'Look first.'),
          responsesText('Listed.'),
        ),
      // The Responses API is OpenAI's: the convention's name is `openai`.
      conventionName: 'openai',
      responseId: /^resp_/,
      reported: ['gen_ai.usage.cache_read.input_tokens', 'gen_ai.usage.reasoning.output_tokens'],
    },
    {
      provider: 'anthropic',
      model: 'anthropic/claude-test',
      app: () => chatApp,
      baseUrl: () => anthropic.baseUrl,
      script: () =>
        anthropic.enqueue(
          anthropicToolUse([{ name: 'list_directory', input: { path: '.' } }]),
          anthropicText('Listed.'),
        ),
      conventionName: 'anthropic',
      responseId: /^msg_/,
      reported: ['gen_ai.usage.cache_read.input_tokens', 'gen_ai.usage.cache_creation.input_tokens'],
    },
  ];

  it.each(cases)(
    '$provider: the provider, the bare model, stream, server, response id, max tokens and every token count',
    async (c) => {
      c.script();
      const events = await (
        await openStream(`${c.app().url}/v1/chat`, { body: { prompt: 'List the files.', model: c.model } })
      ).rest();
      expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
      const runId = events[0].data.runId as string;
      await eventually(() => spansOfRun(collector, runId).chats.length === 2);
      const { run, chats } = spansOfRun(collector, runId);
      const bareModel = c.model.slice(c.model.indexOf('/') + 1);

      expect(run).toHaveLength(1);
      expect(run[0].attributes).toMatchObject({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.provider.name': c.conventionName,
        'gen_ai.request.model': bareModel,
      });
      const steps = events.filter((e: StreamEvent) => e.event === 'step_finished');
      expect(steps).toHaveLength(2);
      chats.forEach((chat, i) => {
        const usage = steps[i].data.usage as Record<string, unknown>;
        expect(chat.name).toBe(`chat ${bareModel}`);
        expect(chat.attributes).toMatchObject({
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': c.conventionName,
          'gen_ai.request.model': bareModel,
          'gen_ai.response.model': bareModel,
          'gen_ai.request.stream': true,
          'gen_ai.request.max_tokens': 2048,
          'server.address': '127.0.0.1',
          'server.port': portOf(c.baseUrl()),
          'gen_ai.response.id': expect.stringMatching(c.responseId),
          ...usageAttributes(usage),
        });
        // Content is recorded only with capture on.
        expect(chat.attributes['gen_ai.input.messages']).toBeUndefined();
        expect(chat.attributes['gen_ai.output.messages']).toBeUndefined();
      });
      // The counts this provider reports are there (the step's usage has them too).
      for (const key of c.reported) expect(Object.keys(chats[0].attributes)).toContain(key);
      expect(chats[0].attributes['gen_ai.response.id']).not.toBe(chats[1].attributes['gen_ai.response.id']);
    },
  );
});

describe('content capture in the convention message shapes, every span bounded (e2e)', () => {
  let upstream: FakeUpstream;
  let collector: OtlpReceiver;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    collector = await OtlpReceiver.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    });
  });
  afterAll(async () => {
    await app.close();
    await collector.close();
    await upstream.close();
  });

  it('records the prompt and the answer as role + parts; a 300 KB answer and a 100 KB tool name stay bounded', async () => {
    const answer = `Start of the answer. ${'word '.repeat(60_000)}End of the answer.`;
    const toolName = `t${'x'.repeat(100_000)}`;
    upstream.enqueue(
      toolCalls([{ id: 'call-long', name: toolName, arguments: { a: 1 } }], { text: 'Calling.' }),
      text(answer, { pieces: 30 }),
    );
    const events = await (
      await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Say a lot, please.' } })
    ).rest();
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    const runId = events[0].data.runId as string;
    await eventually(
      () =>
        spansOfRun(collector, runId).chats.length === 2 &&
        collector.spans.some((s) => s.name.startsWith('execute_tool')),
    );
    const { run, chats } = spansOfRun(collector, runId);

    // The first call's prompt: the system message, then the person's.
    const input = JSON.parse(chats[0].attributes['gen_ai.input.messages'] as string) as {
      role: string;
      parts: { type: string; content?: string }[];
    }[];
    expect(input.map((m) => m.role)).toEqual(['system', 'user']);
    expect(input[1].parts).toEqual([{ type: 'text', content: 'Say a lot, please.' }]);
    const firstOutput = JSON.parse(chats[0].attributes['gen_ai.output.messages'] as string);
    expect(firstOutput).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'text', content: 'Calling.' },
          { type: 'tool_call', id: 'call-long', name: expect.any(String), arguments: { a: 1 } },
        ],
        finish_reason: 'tool_call',
      },
    ]);

    // The second call's prompt carries the call and its result; its answer is cut in its middle, still JSON.
    const second = JSON.parse(chats[1].attributes['gen_ai.input.messages'] as string) as {
      role: string;
      parts: { type: string }[];
    }[];
    expect(second.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(second[3].parts[0]).toMatchObject({ type: 'tool_call_response', id: 'call-long' });
    const output = chats[1].attributes['gen_ai.output.messages'] as string;
    expect(output.length).toBeLessThanOrEqual(8192);
    const [message] = JSON.parse(output) as {
      role: string;
      parts: { content: string }[];
      finish_reason: string;
    }[];
    expect(message).toMatchObject({ role: 'assistant', finish_reason: 'stop' });
    expect(message.parts[0].content).toMatch(
      /^Start of the answer\..*characters left out.*End of the answer\.$/s,
    );

    // Every name and every attribute of every span of the run is bounded.
    const tool = collector.spans.find(
      (s) => s.name.startsWith('execute_tool') && s.parentSpanId === run[0].spanId,
    )!;
    expect(tool.name.length).toBeLessThanOrEqual(256);
    for (const span of [...run, ...chats, tool]) {
      expect(span.name.length).toBeLessThanOrEqual(256);
      for (const value of Object.values(span.attributes))
        for (const item of Array.isArray(value) ? value : [value])
          expect(String(item).length).toBeLessThanOrEqual(8192);
    }
  });
});
