import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  anthropicStatus,
  anthropicText,
  anthropicToolUse,
  FakeAnthropic,
  type AnthropicBody,
} from '../support/fake-anthropic';
import { FakeResponses, responsesCalls, responsesText } from '../support/fake-responses';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { createTestDatabase } from '../support/database';
import {
  answerOf,
  api,
  eventKinds,
  openStream,
  type OpenStream,
  type StreamEvent,
} from '../support/sse-client';

const ofType = (events: StreamEvent[], type: string) =>
  events.filter((e) => e.event === type).map((e) => e.data);

const CLIENT_TOOL = {
  type: 'function',
  function: {
    name: 'ask_user',
    description: 'Ask the person a question',
    parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
  },
};

/** Model providers over HTTP: the whole loop on Anthropic's Messages API, names, the allow-list, fallbacks. */
describe('model providers (e2e)', () => {
  let anthropic: FakeAnthropic;
  let openai: FakeUpstream;

  beforeAll(async () => {
    anthropic = await FakeAnthropic.start();
    openai = await FakeUpstream.start();
  });
  afterAll(async () => {
    await anthropic.close();
    await openai.close();
  });
  afterEach(() => {
    anthropic.reset();
    openai.reset();
  });

  const env = (extra: Record<string, string> = {}) => ({
    OPENAI_BASE_URL: openai.baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-test',
    ANTHROPIC_BASE_URL: anthropic.baseUrl,
    LLM_MAX_RETRIES: '0',
    LLM_HEADERS: '{"X-Gateway-Team":"blue"}',
    ...extra,
  });

  async function chat(app: TestApp, body: Record<string, unknown>): Promise<OpenStream> {
    const stream = await openStream(`${app.url}/v1/chat`, { body });
    expect(stream.status).toBe(200);
    return stream;
  }

  describe('one app with OpenAI and Anthropic configured', () => {
    let app: TestApp;

    beforeAll(async () => {
      app = await startApp(env({ LLM_MODELS: 'anthropic/*,openai/gpt-test' }));
      writeFileSync(join(app.workspace, 'README.md'), '# Demo\nHello from the workspace.\n');
    });
    afterAll(() => app.close());

    it('GET /v1/models names the default model and the configured providers', async () => {
      const res = await api(app.url, 'GET', '/v1/models');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        default: 'openai/gpt-4.1-mini',
        providers: [
          { name: 'openai', baseUrl: openai.baseUrl },
          { name: 'openai-responses', baseUrl: openai.baseUrl },
          { name: 'anthropic', baseUrl: anthropic.baseUrl },
        ],
      });
    });

    it('runs tools, an approval and a client tool on anthropic/…, thinking and reading the cache', async () => {
      anthropic.enqueue(
        anthropicToolUse([{ name: 'read_file', input: { path: 'README.md' } }], {
          thinking: 'Read it first.',
        }),
        anthropicToolUse([{ name: 'write_file', input: { path: 'notes.txt', content: 'hi\n' } }], {
          thinking: 'Now write the note.',
        }),
        anthropicToolUse([{ name: 'ask_user', input: { question: 'Colour?' } }], { thinking: 'Ask them.' }),
        anthropicText('Done: blue.', 'All set.'),
      );
      const stream = await chat(app, {
        prompt: 'Read, write, ask.',
        model: 'anthropic/claude-test',
        reasoning: 'low',
        clientTools: [CLIENT_TOOL],
      });
      const first = await stream.until('tool_approval_required');
      const runId = first[0].data.runId as string;
      const approval = first.at(-1)!.data;
      expect(approval.name).toBe('write_file');
      expect(
        (
          await api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/${approval.toolCallId}/approval`, {
            approve: true,
          })
        ).status,
      ).toBe(202);
      const second = await stream.until((e) => e.event === 'tool_call_start' && e.data.executor === 'client');
      const client = second.at(-1)!.data;
      expect(
        (
          await api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/${client.toolCallId}/result`, {
            content: 'blue',
          })
        ).status,
      ).toBe(202);
      const events = [...first, ...second, ...(await stream.rest())];

      expect(anthropic.refusals).toEqual([]);
      expect(events.at(-1)!.data).toMatchObject({ status: 'completed', iterations: 4 });
      expect(answerOf(events)).toBe('Done: blue.');
      expect(
        ofType(events, 'reasoning')
          .map((r) => r.delta)
          .join(''),
      ).toBe('Read it first.Now write the note.Ask them.All set.');
      expect(eventKinds(events).indexOf('reasoning')).toBeLessThan(
        eventKinds(events).indexOf('tool_call_start'),
      );
      const steps = ofType(events, 'step_finished');
      expect(steps.map((s) => s.finishReason)).toEqual(['tool_calls', 'tool_calls', 'tool_calls', 'stop']);
      expect(steps.every((s) => s.model === 'anthropic/claude-test')).toBe(true);
      // Every call after the run's first reads what the one before wrote.
      expect(steps[0].usage.cacheReadTokens).toBe(0);
      for (const [i, step] of steps.slice(1).entries()) {
        // All of the call before, up to its newest message — also after the run waited (rebuilt from the store).
        expect(step.usage.cacheReadTokens).toBe(
          steps[i].usage.cacheReadTokens + steps[i].usage.cacheWriteTokens,
        );
      }

      // What Anthropic got: thinking on, LLM_HEADERS, each thinking block sent back as it came.
      const bodies = anthropic.requests.map((r) => r.body);
      expect(bodies).toHaveLength(4);
      expect(bodies.every((b) => b.thinking?.type === 'enabled' && b.model === 'claude-test')).toBe(true);
      expect(anthropic.requests.every((r) => r.headers['x-gateway-team'] === 'blue')).toBe(true);
      const last = bodies[3].messages as { role: string; content: { type: string; thinking?: string }[] }[];
      expect(last.filter((m) => m.role === 'assistant').map((m) => m.content[0])).toEqual([
        { type: 'thinking', thinking: 'Read it first.', signature: anthropic.signature('Read it first.') },
        {
          type: 'thinking',
          thinking: 'Now write the note.',
          signature: anthropic.signature('Now write the note.'),
        },
        { type: 'thinking', thinking: 'Ask them.', signature: anthropic.signature('Ask them.') },
      ]);

      const session = await api(app.url, 'GET', `/v1/sessions/${events[0].data.sessionId as string}`);
      const answers = (
        session.body.messages as { role: string; reasoning?: string; content: string | null }[]
      ).filter((m) => m.role === 'assistant');
      expect(answers.map((m) => m.reasoning)).toEqual([
        'Read it first.',
        'Now write the note.',
        'Ask them.',
        'All set.',
      ]);
      expect(answers.at(-1)!.content).toBe('Done: blue.');
      expect(session.body.reasoning).toBe('low');
    });

    it('refuses an unknown provider prefix and a model outside LLM_MODELS with a 400 naming model', async () => {
      for (const model of ['antropic/claude-test', 'openai/gpt-other']) {
        const res = await api(app.url, 'POST', '/v1/chat', { prompt: 'hi', model });
        expect(res.status).toBe(400);
        expect(String(res.body.message)).toMatch(/^model /);
        const created = await api(app.url, 'POST', '/v1/sessions', { model });
        expect(created.status).toBe(400);
      }
      expect(anthropic.requests).toHaveLength(0);
      expect(openai.requests).toHaveLength(0);
    });
  });

  it('refuses a session on anthropic when it is not configured', async () => {
    const app = await startApp({ OPENAI_BASE_URL: openai.baseUrl });
    try {
      const res = await api(app.url, 'POST', '/v1/sessions', { model: 'anthropic/claude-test' });
      expect(res.status).toBe(400);
      expect(String(res.body.message)).toMatch(/anthropic is not configured: set ANTHROPIC_API_KEY/);
      expect(String(res.body.message)).not.toMatch(/router/);
      expect((await api(app.url, 'GET', '/v1/models')).body.providers).toEqual([
        { name: 'openai', baseUrl: openai.baseUrl },
        { name: 'openai-responses', baseUrl: openai.baseUrl },
      ]);
    } finally {
      await app.close();
    }
  });

  it('falls back to the next model when the call fails retryably before its first event, never after', async () => {
    const app = await startApp(
      env({ LLM_MODEL: 'anthropic/claude-test', LLM_FALLBACK_MODELS: 'openai/gpt-fallback' }),
    );
    try {
      anthropic.enqueue(anthropicStatus(529, 'overloaded_error', 'Overloaded'));
      openai.enqueue(text('From the fallback.'));
      const events = await (await chat(app, { prompt: 'hi' })).rest();
      expect(answerOf(events)).toBe('From the fallback.');
      expect(events[0].data.model).toBe('anthropic/claude-test');
      expect(ofType(events, 'step_finished')[0].model).toBe('openai/gpt-fallback');
      expect((openai.requests[0].body as { model: string }).model).toBe('gpt-fallback');

      // Once it has streamed, a failure is the run's: nothing goes to the fallback.
      anthropic.enqueue({
        kind: 'raw',
        text:
          'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}\n\n' +
          'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
          'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Half"}}\n\n' +
          'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
      });
      const failed = await (await chat(app, { prompt: 'again' })).rest();
      expect(answerOf(failed)).toBe('Half');
      expect(failed.at(-1)!.data).toMatchObject({ type: 'error', retryable: true });
      expect(openai.requests).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('keeps a conversation both accept when a session switches provider between prompts', async () => {
    const databaseUrl = await createTestDatabase();
    // The session names no model: each prompt goes to LLM_MODEL as the server has it then.
    let app = await startApp(env({ LLM_MODEL: 'openai/gpt-test' }), databaseUrl);
    let sessionId: string;
    try {
      writeFileSync(join(app.workspace, 'README.md'), 'hello\n');
      openai.enqueue(
        toolCalls([{ id: 'call_1', name: 'read_file', arguments: { path: 'README.md' } }]),
        text('It says hello.'),
      );
      const first = await (await chat(app, { prompt: 'Read the README.', reasoning: 'high' })).rest();
      expect(first.at(-1)!.data).toMatchObject({ status: 'completed' });
      sessionId = first[0].data.sessionId as string;
    } finally {
      await app.close();
    }

    app = await startApp(env({ LLM_MODEL: 'anthropic/claude-test' }), databaseUrl);
    try {
      writeFileSync(join(app.workspace, 'README.md'), 'hello\n');
      anthropic.enqueue(
        anthropicToolUse([{ name: 'read_file', input: { path: 'README.md' } }], { thinking: 'Again.' }),
        anthropicText('Still hello.', 'Same file.'),
      );
      const second = await (await chat(app, { prompt: 'And now?', sessionId })).rest();
      expect(anthropic.refusals).toEqual([]);
      expect(second.at(-1)!.data).toMatchObject({ status: 'completed' });
      const sent: AnthropicBody = anthropic.requests[0].body;
      // OpenAI's call and result as tool_use and tool_result, then the new prompt.
      expect(sent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
      expect(sent.thinking?.type).toBe('enabled');
    } finally {
      await app.close();
    }

    app = await startApp(env({ LLM_MODEL: 'openai/gpt-test' }), databaseUrl);
    try {
      openai.reset();
      openai.enqueue(text('Yes.'));
      const third = await (await chat(app, { prompt: 'Sure?', sessionId })).rest();
      expect(third.at(-1)!.data).toMatchObject({ status: 'completed' });
      // Anthropic's thinking blocks are not OpenAI's to see: the Chat Completions history has none.
      const messages = (openai.requests[0].body as unknown as { messages: Record<string, unknown>[] })
        .messages;
      expect(JSON.stringify(messages)).not.toContain('signature');
      expect(messages.filter((m) => m.role === 'tool')).toHaveLength(2);
      expect((openai.requests[0].body as { reasoning_effort?: string }).reasoning_effort).toBe('high');
    } finally {
      await app.close();
    }
  });

  it('runs tools, an approval and a client tool on openai-responses/…, sending its reasoning items back', async () => {
    const responses = await FakeResponses.start();
    // The Responses API is reached with the openai provider's key and base URL.
    const app = await startApp({ OPENAI_BASE_URL: responses.baseUrl, LLM_MAX_RETRIES: '0' });
    try {
      writeFileSync(join(app.workspace, 'README.md'), '# Demo\n');
      responses.enqueue(
        responsesCalls([{ name: 'read_file', arguments: { path: 'README.md' } }], 'Read first.'),
        responsesCalls(
          [{ name: 'write_file', arguments: { path: 'n.txt', content: 'hi\n' } }],
          'Then write.',
        ),
        responsesCalls([{ name: 'ask_user', arguments: { question: 'Colour?' } }], 'Then ask.'),
        responsesText('Done: blue.', 'All set.'),
      );
      const stream = await chat(app, {
        prompt: 'Read, write, ask.',
        model: 'openai-responses/gpt-5-mini',
        reasoning: 'medium',
        clientTools: [CLIENT_TOOL],
      });
      const first = await stream.until('tool_approval_required');
      const runId = first[0].data.runId as string;
      const approval = first.at(-1)!.data;
      await api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/${approval.toolCallId}/approval`, {
        approve: true,
      });
      const second = await stream.until((e) => e.event === 'tool_call_start' && e.data.executor === 'client');
      const client = second.at(-1)!.data;
      await api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/${client.toolCallId}/result`, {
        content: 'blue',
      });
      const events = [...first, ...second, ...(await stream.rest())];

      expect(responses.refusals).toEqual([]);
      expect(events.at(-1)!.data).toMatchObject({ status: 'completed', iterations: 4 });
      expect(answerOf(events)).toBe('Done: blue.');
      expect(
        ofType(events, 'reasoning')
          .map((r) => r.delta)
          .join(''),
      ).toBe('Read first.Then write.Then ask.All set.');
      const steps = ofType(events, 'step_finished');
      expect(steps.every((s) => s.model === 'openai-responses/gpt-5-mini')).toBe(true);
      expect(steps.slice(1).every((s) => s.usage.cacheReadTokens > 0 && s.usage.reasoningTokens > 0)).toBe(
        true,
      );
      const bodies = responses.requests.map((r) => r.body);
      expect(bodies.every((b) => b.store === false && b.reasoning?.effort === 'medium')).toBe(true);
      // Each answer's encrypted reasoning item went back, also after the run waited and was rebuilt from the store.
      expect(bodies[3].input.filter((i) => i.type === 'reasoning')).toHaveLength(3);
      expect(bodies[3].input.filter((i) => i.type === 'function_call_output')).toHaveLength(3);
    } finally {
      await app.close();
      await responses.close();
    }
  });
});
