import { FakeUpstream, status, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { OtlpReceiver } from '../support/otlp-receiver';
import { createTestDatabase } from '../support/database';
import { spawnServer } from '../support/server-process';
import { api, openStream } from '../support/sse-client';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN = '00f067aa0ba902b7';

describe('OpenTelemetry traces of runs, exported by the SDK over OTLP (e2e)', () => {
  let upstream: FakeUpstream;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
  });
  afterAll(() => upstream.close());
  beforeEach(() => upstream.reset());

  describe('with a collector', () => {
    let collector: OtlpReceiver;
    let app: TestApp;

    beforeAll(async () => {
      collector = await OtlpReceiver.start();
      app = await startApp({
        OPENAI_BASE_URL: upstream.baseUrl,
        LLM_MODEL: 'test-model',
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      });
    });
    afterAll(async () => {
      await app.close();
      await collector.close();
    });

    it('traces a run under the request traceparent: model calls, tools, and one trace across an approval', async () => {
      upstream.enqueue(
        toolCalls(
          [
            { id: 'read-1', name: 'read_file', arguments: { path: 'missing.txt' } },
            { id: 'write-1', name: 'write_file', arguments: { path: 'out.txt', content: 'secret words' } },
          ],
          { usage: { promptTokens: 120, completionTokens: 30 } },
        ),
        text('Written.', { usage: { promptTokens: 200, completionTokens: 5 } }),
      );
      const stream = await openStream(`${app.url}/v1/chat`, {
        body: { prompt: 'Write the file' },
        headers: { traceparent: `00-${TRACE_ID}-${PARENT_SPAN}-01` },
      });
      const head = await stream.until('tool_approval_required');
      const { runId, sessionId } = {
        runId: head[0].data.runId as string,
        sessionId: head[0].data.sessionId as string,
      };
      expect(
        (await api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/write-1/approval`, { approve: true }))
          .status,
      ).toBe(202);
      const rest = await stream.rest();
      expect(rest[rest.length - 1].data.status).toBe('completed');

      await eventually(
        () =>
          collector.named('invoke_agent').length === 2 &&
          collector.named('chat test-model').length === 2 &&
          collector.spans.filter((s) => s.name.startsWith('execute_tool')).length === 2,
      );
      expect(new Set(collector.spans.map((s) => s.traceId))).toEqual(new Set([TRACE_ID]));
      expect(collector.spans[0].resource['service.name']).toBe('loopwright');

      const [first, second] = collector
        .named('invoke_agent')
        .sort((a, b) => a.startTimeUnixNano.localeCompare(b.startTimeUnixNano));
      // The request's span is the run's parent; the stretch after the approval continues under the run's first span.
      expect(first.parentSpanId).toBe(PARENT_SPAN);
      expect(second.parentSpanId).toBe(first.spanId);
      expect(first.attributes).toMatchObject({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.conversation.id': sessionId,
        'loopwright.run.id': runId,
        'loopwright.run.status': 'requires_action',
      });
      expect(second.attributes).toMatchObject({
        'loopwright.run.id': runId,
        'loopwright.run.status': 'completed',
      });

      const chats = collector.named('chat test-model');
      expect(chats.map((c) => c.parentSpanId).sort()).toEqual([first.spanId, second.spanId].sort());
      const firstChat = chats.find((c) => c.parentSpanId === first.spanId)!;
      expect(firstChat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'test-model',
        'gen_ai.response.model': 'test-model',
        'gen_ai.response.finish_reasons': ['tool_calls'],
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 30,
      });

      const write = collector.named('execute_tool write_file')[0];
      expect(write.parentSpanId).toBe(second.spanId);
      expect(write.attributes).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'write_file',
        'gen_ai.tool.call.id': 'write-1',
        'loopwright.tool.waited_for': 'approval',
      });
      // The wait for the person is inside the span: it starts when the call was recorded, before the run's second stretch.
      expect(BigInt(write.startTimeUnixNano)).toBeLessThan(BigInt(second.startTimeUnixNano));
      expect(write.events.map((e) => e.name)).toEqual(['approved']);
      const read = collector.named('execute_tool read_file')[0];
      expect(read.attributes['error.type']).toEqual(expect.any(String));
      expect(read.status.code).toBe(2);
      // Content stays out unless OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
      expect(JSON.stringify(collector.spans)).not.toContain('secret words');
    });

    it("puts runs the frontends start (useChat, AG-UI) under the request's traceparent too", async () => {
      const AI_SDK_TRACE = '5ce0a03577b34da6a3ce929d0e0e4737';
      const AG_UI_TRACE = '6df1b13577b34da6a3ce929d0e0e4738';
      upstream.enqueue(text('From useChat.'), text('From AG-UI.'));
      const useChat = await fetch(`${app.url}/v1/ai-sdk/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: `00-${AI_SDK_TRACE}-${PARENT_SPAN}-01` },
        body: JSON.stringify({
          id: 'traced-chat',
          trigger: 'submit-message',
          messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] }],
        }),
      });
      expect(useChat.status).toBe(200);
      await useChat.text();
      const agUi = await fetch(`${app.url}/v1/ag-ui`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: `00-${AG_UI_TRACE}-${PARENT_SPAN}-01` },
        body: JSON.stringify({
          threadId: 'traced-thread',
          runId: 'r1',
          messages: [{ id: 'u1', role: 'user', content: 'Hi' }],
          tools: [],
          context: [],
        }),
      });
      expect(agUi.status).toBe(200);
      await agUi.text();

      const runSpanOf = (traceId: string) =>
        collector.named('invoke_agent').find((span) => span.traceId === traceId);
      await eventually(() => runSpanOf(AI_SDK_TRACE) !== undefined && runSpanOf(AG_UI_TRACE) !== undefined);
      expect(runSpanOf(AI_SDK_TRACE)!.parentSpanId).toBe(PARENT_SPAN);
      expect(runSpanOf(AG_UI_TRACE)!.parentSpanId).toBe(PARENT_SPAN);
    });

    it("shows a client tool's wait in its span, and a failed run's span as an error", async () => {
      upstream.enqueue(
        toolCalls([{ id: 'where-1', name: 'get_location', arguments: {} }]),
        text('In Paris.'),
      );
      const stream = await openStream(`${app.url}/v1/chat`, {
        body: {
          prompt: 'Where am I?',
          clientTools: [
            { type: 'function', function: { name: 'get_location', parameters: { type: 'object' } } },
          ],
        },
      });
      const head = await stream.until('tool_call_start');
      const runId = head[0].data.runId as string;
      const posted = await api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/where-1/result`, {
        content: 'Paris',
      });
      expect(posted.status).toBe(202);
      expect((await stream.rest()).pop()?.data.status).toBe('completed');

      upstream.enqueue(status(400, { error: { message: 'bad request', type: 'invalid_request_error' } }));
      const failed = await (await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Fail' } })).rest();
      const failedRunId = failed[0].data.runId as string;
      expect(failed.pop()?.event).toBe('error');

      const runSpans = (id: string) =>
        collector.named('invoke_agent').filter((s) => s.attributes['loopwright.run.id'] === id);
      await eventually(
        () => collector.named('execute_tool get_location').length === 1 && runSpans(failedRunId).length === 1,
      );
      const client = collector.named('execute_tool get_location')[0];
      expect(client.attributes).toMatchObject({
        'gen_ai.tool.call.id': 'where-1',
        'loopwright.tool.waited_for': 'client',
      });
      expect(client.events.map((e) => e.name)).toEqual(['client_result']);
      const [firstStretch] = runSpans(runId).sort((a, b) =>
        a.startTimeUnixNano.localeCompare(b.startTimeUnixNano),
      );
      expect(client.parentSpanId).toBe(firstStretch.spanId);
      const failedSpan = runSpans(failedRunId)[0];
      expect(failedSpan.status.code).toBe(2);
      expect(failedSpan.attributes).toMatchObject({
        'loopwright.run.status': 'failed',
        'error.type': 'UPSTREAM_BAD_REQUEST',
      });
      const failedChat = collector.spans.find(
        (s) => s.parentSpanId === failedSpan.spanId && s.name.startsWith('chat'),
      );
      expect(failedChat?.attributes['error.type']).toBe('UPSTREAM_BAD_REQUEST');
    });
  });

  it('records prompts, answers and arguments only when content capture is on', async () => {
    const collector = await OtlpReceiver.start();
    const app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.endpoint}/v1/traces`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    });
    try {
      upstream.enqueue(
        toolCalls([{ id: 'r', name: 'list_directory', arguments: { path: '.' } }]),
        text('The answer words.'),
      );
      const events = await (await openStream(`${app.url}/v1/chat`, { body: { prompt: 'List' } })).rest();
      expect(events[events.length - 1].event).toBe('done');
      await eventually(() => collector.named('invoke_agent').length === 1 && collector.spans.length >= 4);
      const exported = JSON.stringify(collector.spans);
      expect(exported).toContain('The answer words.');
      expect(
        collector.named('execute_tool list_directory')[0].attributes['gen_ai.tool.call.arguments'],
      ).toContain('"path"');
    } finally {
      await app.close();
      await collector.close();
    }
  });

  it("puts the run's trace_id on its log lines (the production entry, its own process)", async () => {
    const collector = await OtlpReceiver.start();
    const server = await spawnServer({
      OPENAI_BASE_URL: upstream.baseUrl,
      DATABASE_URL: await createTestDatabase(),
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
    try {
      upstream.enqueue(text('Logged.'));
      const events = await (
        await openStream(`${server.url}/v1/chat`, {
          body: { prompt: 'Hi' },
          headers: { traceparent: `00-${TRACE_ID}-${PARENT_SPAN}-01` },
        })
      ).rest();
      const runId = events[0].data.runId as string;
      await eventually(() => server.output().includes('run paused or ended'));
      const lines = server
        .output()
        .split('\n')
        .filter((l) => l.includes(runId));
      expect(lines.length).toBeGreaterThanOrEqual(2);
      for (const line of lines) expect(JSON.parse(line)).toMatchObject({ runId, trace_id: TRACE_ID });
    } finally {
      await server.kill('SIGTERM');
      await collector.close();
    }
  });

  it('runs as usual when the collector is unreachable', async () => {
    const dead = await OtlpReceiver.start();
    const endpoint = dead.endpoint;
    await dead.close();
    const app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
    });
    try {
      upstream.enqueue(text('Still here.'));
      const events = await (await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Hi' } })).rest();
      expect(events[events.length - 1].data.status).toBe('completed');
    } finally {
      await app.close();
    }
  });
});
