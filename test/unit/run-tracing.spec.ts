import { RunTracing } from '../../src/observability/run-tracing.service';
import { eventually } from '../support/eventually';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const REQUEST_SPAN = '00f067aa0ba902b7';

/** RunTracing on its own, exporting to a test collector over OTLP/JSON. */
function tracingTo(collector: OtlpReceiver, captureContent = false): RunTracing {
  return new RunTracing({
    tracing: {
      tracesUrl: `${collector.endpoint}/v1/traces`,
      protocol: 'http/json',
      headers: {},
      serviceName: 'loopwright',
      timeoutMs: 2000,
      captureContent,
    },
  });
}

type Linked = ReceivedSpan & { links?: { traceId: string; spanId: string }[] };

describe('RunTracing', () => {
  let collector: OtlpReceiver;

  beforeEach(async () => {
    collector = await OtlpReceiver.start();
  });
  afterEach(() => collector.close());

  it('traces a model call made outside any run (a summary) as a root, or under a given traceparent', async () => {
    const tracing = tracingTo(collector, true);
    const call = {
      provider: 'openai-responses',
      requestModel: 'gpt-test',
      responseId: 'resp_1',
      server: { address: 'api.example.com', port: 443 },
      maxTokens: 1024,
      startedAt: Date.now() - 5,
      finishReason: 'stop',
      usage: { promptTokens: 50, completionTokens: 7, cacheReadTokens: 32, reasoningTokens: 3 },
      purpose: 'summary' as const,
      input: () => [{ role: 'user' as const, content: 'Summarize this.' }],
      output: () => ({ text: 'A summary.', toolCalls: [] }),
    };
    tracing.modelCall(call);
    tracing.modelCall(call, `00-${TRACE_ID}-${REQUEST_SPAN}-01`);
    await tracing.onApplicationShutdown();
    await eventually(() => collector.named('chat gpt-test').length === 2);

    const [root, child] = collector
      .named('chat gpt-test')
      .sort((a, b) => a.parentSpanId.localeCompare(b.parentSpanId));
    expect(root.parentSpanId).toBe('');
    expect(child).toMatchObject({ traceId: TRACE_ID, parentSpanId: REQUEST_SPAN });
    expect(root.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.response.model': 'gpt-test',
      'gen_ai.request.stream': true,
      'gen_ai.request.max_tokens': 1024,
      'gen_ai.response.id': 'resp_1',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 50,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.usage.cache_read.input_tokens': 32,
      'gen_ai.usage.reasoning.output_tokens': 3,
      'server.address': 'api.example.com',
      'server.port': 443,
      'loopwright.model_call.purpose': 'summary',
      'gen_ai.input.messages': JSON.stringify([
        { role: 'user', parts: [{ type: 'text', content: 'Summarize this.' }] },
      ]),
      'gen_ai.output.messages': JSON.stringify([
        { role: 'assistant', parts: [{ type: 'text', content: 'A summary.' }], finish_reason: 'stop' },
      ]),
    });
  });

  it("puts a taken-over stretch in the run's trace without a parent no collector has: a root, linked to the stretch it continues", async () => {
    const run = { runId: 'run-1', sessionId: 'session-1', provider: 'anthropic', model: 'claude-test' };
    // The first process: its stretch is never ended (the process died), so never exported.
    const lost = tracingTo(collector).startRun(run, `00-${TRACE_ID}-${REQUEST_SPAN}-01`);
    const stored = lost.traceParent!;

    const tracing = tracingTo(collector);
    const resumed = tracing.startRun(run, stored, true);
    resumed.modelCall({ provider: 'anthropic', requestModel: 'claude-test', startedAt: Date.now() });
    resumed.end('completed');
    await tracing.onApplicationShutdown();
    await eventually(() => collector.spans.length === 2);

    const exported = new Set(collector.spans.map((s) => s.spanId));
    // Every span is a root or hangs under a span the collector has.
    for (const span of collector.spans)
      expect(span.parentSpanId === '' || exported.has(span.parentSpanId)).toBe(true);
    const [stretch] = collector.named('invoke_agent') as Linked[];
    expect(stretch.traceId).toBe(TRACE_ID);
    expect(stretch.parentSpanId).toBe('');
    expect(stretch.links?.map((l) => `00-${l.traceId}-${l.spanId}-01`)).toEqual([stored]);
    expect(stretch.attributes).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-test',
    });
    expect(collector.named('chat claude-test')[0].parentSpanId).toBe(stretch.spanId);
  });

  it('a stretch after a wait stays under the run span it continues', async () => {
    const tracing = tracingTo(collector);
    const run = { runId: 'run-2', sessionId: 'session-2', provider: 'openai', model: 'gpt-test' };
    const first = tracing.startRun(run, null);
    first.end('requires_action');
    tracing.startRun(run, first.traceParent).end('completed');
    await tracing.onApplicationShutdown();
    await eventually(() => collector.named('invoke_agent').length === 2);
    const [a, b] = collector.named('invoke_agent');
    const [firstSpan, second] = a.parentSpanId === '' ? [a, b] : [b, a];
    expect(second.parentSpanId).toBe(firstSpan.spanId);
  });
});
