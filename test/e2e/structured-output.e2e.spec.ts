import { FakeAnthropic, anthropicText, anthropicToolUse } from '../support/fake-anthropic';
import { FakeResponses, responsesText } from '../support/fake-responses';
import { FakeUpstream, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { answerOf, api, eventKinds, openStream, type StreamEvent } from '../support/sse-client';
import { compileSchema } from '../../src/tools/json-schema';

/** A schema OpenAI's strict mode takes: closed objects, every property required. */
const REVIEW = {
  type: 'object',
  properties: {
    severity: { type: 'string', enum: ['low', 'high'] },
    files: { type: 'array', items: { type: 'string' } },
  },
  required: ['severity', 'files'],
  additionalProperties: false,
};
/** One it does not: an optional property, an open object, a length bound (not Anthropic's either). */
const LOOSE = {
  type: 'object',
  properties: { title: { type: 'string', minLength: 3 }, note: { type: 'string' } },
  required: ['title'],
};

const valid = JSON.stringify({ severity: 'high', files: ['a.ts'] });

async function run(app: TestApp, path: string, body: Record<string, unknown>): Promise<StreamEvent[]> {
  const stream = await openStream(`${app.url}${path}`, { body });
  expect(stream.status).toBe(200);
  return stream.rest();
}

const last = (events: StreamEvent[]) => events.at(-1)!;

/** Structured output ("Structured output" in the contract) on each provider's fake. */
describe('structured output (e2e)', () => {
  let openai: FakeUpstream;
  let responses: FakeResponses;
  let anthropic: FakeAnthropic;
  let app: TestApp;

  beforeAll(async () => {
    [openai, responses, anthropic] = await Promise.all([
      FakeUpstream.start(),
      FakeResponses.start(),
      FakeAnthropic.start(),
    ]);
    app = await startApp({
      OPENAI_BASE_URL: openai.baseUrl,
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: anthropic.baseUrl,
      LLM_MAX_RETRIES: '0',
    });
  });
  afterAll(async () => {
    await app?.close();
    await Promise.all([openai.close(), responses.close(), anthropic.close()]);
  });
  afterEach(() => {
    openai.reset();
    responses.reset();
    anthropic.reset();
  });

  it('Chat Completions: response_format json_schema (strict when the schema qualifies), done.output, the JSON stored', async () => {
    openai.enqueue(text(valid));
    const events = await run(app, '/v1/chat', {
      prompt: 'Review it.',
      responseFormat: { type: 'json_schema', name: 'review', schema: REVIEW },
    });
    const done = last(events);
    expect(done.event).toBe('done');
    expect(done.data.output).toEqual({ severity: 'high', files: ['a.ts'] });
    expect(compileSchema(REVIEW)(done.data.output)).toBe(true);
    expect(openai.requests[0].refused).toBeUndefined();
    expect(openai.requests[0].body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'review', schema: REVIEW, strict: true },
    });
    const session = await api(app.url, 'GET', `/v1/sessions/${done.data.sessionId as string}`);
    const answer = session.body.messages.find((m: { id: string }) => m.id === done.data.messageId);
    expect(JSON.parse(answer.content as string)).toEqual(done.data.output);
  });

  it('Chat Completions: a schema strict mode refuses goes without strict, under the server name', async () => {
    openai.enqueue(text('{"title":"Bug"}'));
    const events = await run(app, '/v1/chat', {
      prompt: 'Title it.',
      responseFormat: { type: 'json_schema', schema: LOOSE },
    });
    expect(last(events).data.output).toEqual({ title: 'Bug' });
    expect(openai.requests[0].refused).toBeUndefined();
    expect(openai.requests[0].body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'output', schema: LOOSE },
    });
  });

  it('Responses API: text.format json_schema', async () => {
    // The Responses API is reached with the openai provider's base URL.
    const own = await startApp({ OPENAI_BASE_URL: responses.baseUrl, LLM_MAX_RETRIES: '0' });
    try {
      responses.enqueue(responsesText(valid));
      const events = await run(own, '/v1/chat', {
        prompt: 'Review it.',
        model: 'openai-responses/gpt-test',
        responseFormat: { type: 'json_schema', name: 'review', schema: REVIEW },
      });
      expect(responses.refusals).toEqual([]);
      expect(last(events).data.output).toEqual({ severity: 'high', files: ['a.ts'] });
      expect(responses.requests[0].body.text).toEqual({
        format: { type: 'json_schema', name: 'review', schema: REVIEW, strict: true },
      });
    } finally {
      await own.close();
    }
  });

  it('Anthropic: output_config.format with the schema in the subset it takes, tools on the way', async () => {
    anthropic.enqueue(
      anthropicToolUse([{ name: 'list_files', input: { path: '.' } }]),
      anthropicText('{"title":"Bug report"}'),
    );
    const events = await run(app, '/v1/chat', {
      prompt: 'Title it.',
      model: 'anthropic/claude-test',
      responseFormat: { type: 'json_schema', schema: LOOSE },
    });
    expect(anthropic.refusals).toEqual([]);
    expect(last(events).data).toMatchObject({
      status: 'completed',
      iterations: 2,
      output: { title: 'Bug report' },
    });
    expect(eventKinds(events)).toContain('tool_call_result');
    const format = anthropic.requests[0].body.output_config?.format as {
      type: string;
      schema: Record<string, unknown>;
    };
    expect(format.type).toBe('json_schema');
    expect(format.schema).toMatchObject({ type: 'object', additionalProperties: false, required: ['title'] });
    expect(JSON.stringify(format.schema)).not.toContain('"minLength"');
  });

  it('an answer that does not validate goes back once with what is wrong; the next one fails INVALID_OUTPUT', async () => {
    openai.enqueue(text('Sure! Here it is: high'), text('{"severity":"urgent","files":[]}'));
    const events = await run(app, '/v1/chat', {
      prompt: 'Review it.',
      responseFormat: { type: 'json_schema', schema: REVIEW },
    });
    expect(openai.requests).toHaveLength(2);
    const corrective = openai.requests[1].body.messages.at(-1)!;
    expect(corrective.role).toBe('user');
    expect(corrective.content).toContain('not JSON');
    const end = last(events);
    expect(end.event).toBe('error');
    expect(end.data).toMatchObject({ code: 'INVALID_OUTPUT', retryable: false });
    expect(end.data.message).toContain('severity: must be one of');
    expect(eventKinds(events).filter((k) => k === 'step_finished')).toHaveLength(2);

    const runId = end.data.runId as string;
    const stored = await api(app.url, 'GET', `/v1/runs/${runId}`);
    expect(stored.body).toMatchObject({ status: 'failed', error: { code: 'INVALID_OUTPUT' } });
    const session = await api(app.url, 'GET', `/v1/sessions/${stored.body.sessionId as string}`);
    expect(session.body.messages.map((m: { role: string }) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
  });

  it('an invalid answer on the last call the cap allows fails INVALID_OUTPUT at once (no call is left for a correction)', async () => {
    openai.enqueue(text('not json'));
    const events = await run(app, '/v1/chat', {
      prompt: 'Review it.',
      maxIterations: 1,
      responseFormat: { type: 'json_schema', schema: REVIEW },
    });
    expect(openai.requests).toHaveLength(1);
    expect(last(events).data).toMatchObject({ type: 'error', code: 'INVALID_OUTPUT', retryable: false });
  });

  it('a corrected answer ends the run with its output', async () => {
    openai.enqueue(text('{"severity":"high"}'), text(valid));
    const events = await run(app, '/v1/chat', {
      prompt: 'Review it.',
      responseFormat: { type: 'json_schema', schema: REVIEW },
    });
    expect(openai.requests[1].body.messages.at(-1)!.content).toContain('files: is required');
    expect(last(events).data).toMatchObject({
      status: 'completed',
      iterations: 2,
      output: JSON.parse(valid),
    });
    expect(answerOf(events)).toBe(`{"severity":"high"}${valid}`);
  });

  it("the session's responseFormat holds for each run; one sent with a prompt is that run's only", async () => {
    const created = await api(app.url, 'POST', '/v1/sessions', {
      responseFormat: { type: 'json_schema', name: 'review', schema: REVIEW },
    });
    expect(created.status).toBe(201);
    expect(created.body.responseFormat).toEqual({ type: 'json_schema', name: 'review', schema: REVIEW });
    const id = created.body.id as string;

    openai.enqueue(text('{"title":"Other"}'));
    const own = await run(app, `/v1/sessions/${id}/messages`, {
      content: 'Title it.',
      responseFormat: { type: 'json_schema', schema: LOOSE },
    });
    expect(last(own).data.output).toEqual({ title: 'Other' });
    expect(openai.requests[0].body.response_format).toMatchObject({ json_schema: { schema: LOOSE } });

    openai.enqueue(text(valid));
    const next = await run(app, '/v1/chat', { prompt: 'Again.', sessionId: id });
    expect(last(next).data.output).toEqual(JSON.parse(valid));
    expect(openai.requests[1].body.response_format).toMatchObject({ json_schema: { name: 'review' } });
  });
});
