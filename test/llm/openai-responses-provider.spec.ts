import OpenAI, { BadRequestError } from 'openai';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { loadConfig } from '../../src/config/app-config';
import type { ModelMessage, ModelRequest } from '../../src/llm/model-provider';
import { OpenAiResponsesProvider } from '../../src/llm/providers/openai-responses/openai-responses.provider';
import { FakeResponses, responsesCalls, responsesStatus, responsesText } from '../support/fake-responses';
import { collect, neverAborted, WEATHER_TOOL } from './llm-harness';

describe('FakeResponses, read by the official SDK', () => {
  let fake: FakeResponses;
  let client: OpenAI;

  beforeAll(async () => {
    fake = await FakeResponses.start();
    client = new OpenAI({ apiKey: 'sk-test', baseURL: fake.baseUrl, maxRetries: 0 });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  it('streams reasoning, text and a function call the SDK assembles into a response', async () => {
    fake.enqueue({
      kind: 'answer',
      reasoning: 'Look it up.',
      text: 'Checking.',
      calls: [{ name: 'weather', arguments: { location: 'Oslo' } }],
    });
    const stream = client.responses.stream({
      model: 'gpt-5-mini',
      input: 'Weather?',
      store: false,
      include: ['reasoning.encrypted_content'],
    });
    const response = await stream.finalResponse();
    expect(response.status).toBe('completed');
    expect(response.output.map((i) => i.type)).toEqual(['reasoning', 'message', 'function_call']);
    expect(response.output_text).toBe('Checking.');
    expect(response.output[2]).toMatchObject({ name: 'weather', arguments: '{"location":"Oslo"}' });
    expect(response.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
  });

  async function refusal(input: ResponseInputItem[]): Promise<BadRequestError> {
    const error: unknown = await client.responses.create({ model: 'gpt-5-mini', input, store: false }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).status).toBe(400);
    expect((error as BadRequestError).type).toBe('invalid_request_error');
    return error as BadRequestError;
  }

  it('refuses a function call without its output', async () => {
    const bad = await refusal([
      { role: 'user', content: 'Weather?' },
      { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{}' },
    ]);
    expect(bad.message).toMatch(/No tool output found for function call call_1/);
  });

  it('refuses an output for no call, and a reasoning item whose encrypted content changed', async () => {
    await refusal([
      { role: 'user', content: 'x' },
      { type: 'function_call_output', call_id: 'call_9', output: 'y' },
    ]);
    const bad = await refusal([
      { role: 'user', content: 'x' },
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [{ type: 'summary_text', text: 'a' }],
        encrypted_content: 'forged',
      },
    ]);
    expect(bad.message).toMatch(/could not be verified/);
  });
});

describe('OpenAiResponsesProvider', () => {
  let fake: FakeResponses;

  beforeAll(async () => {
    fake = await FakeResponses.start();
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const provider = (env: Record<string, string> = {}) =>
    new OpenAiResponsesProvider(
      loadConfig(
        { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: fake.baseUrl, LLM_MAX_RETRIES: '1', ...env },
        '/tmp',
      ),
    );
  const request = (messages: ModelMessage[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
    model: 'gpt-5-mini',
    messages,
    tools: [WEATHER_TOOL],
    ...extra,
  });

  it('streams text and function calls, sends store:false, and asks for reasoning with its effort', async () => {
    fake.enqueue(
      responsesCalls(
        [
          { name: 'weather', arguments: { location: 'Oslo' } },
          { name: 'weather', arguments: { location: 'Rome' } },
        ],
        'Two cities.',
      ),
    );
    const result = await collect(
      provider({ LLM_HEADERS: '{"X-Gateway":"yes"}' }).stream(
        request(
          [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'Oslo and Rome?' },
          ],
          { reasoning: 'high' },
        ),
        neverAborted(),
      ),
    );
    expect(result.error).toBeUndefined();
    expect(result.reasoning).toBe('Two cities.');
    expect(result.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown])).toEqual([
      ['weather', { location: 'Oslo' }],
      ['weather', { location: 'Rome' }],
    ]);
    expect(result.finish).toMatchObject({ finishReason: 'tool_calls' });
    expect(result.finish?.usage.reasoningTokens).toBeGreaterThan(0);
    const { body, headers } = fake.requests[0];
    expect(headers['x-gateway']).toBe('yes');
    expect(body).toMatchObject({
      store: false,
      stream: true,
      include: ['reasoning.encrypted_content'],
      instructions: 'Be brief.',
      reasoning: { effort: 'high' },
    });
    expect(result.finish?.providerData?.provider).toBe('openai-responses');
  });

  it('sends the encrypted reasoning items back unchanged, with each call and its output', async () => {
    fake.enqueue(responsesCalls([{ name: 'weather', arguments: { location: 'Oslo' } }], 'Need Oslo.'));
    const first = await collect(
      provider().stream(request([{ role: 'user', content: 'Oslo?' }], { reasoning: 'low' }), neverAborted()),
    );
    const call = first.toolCalls[0];
    fake.enqueue(responsesText('Cold.'));
    const second = await collect(
      provider().stream(
        request(
          [
            { role: 'user', content: 'Oslo?' },
            { role: 'assistant', content: null, toolCalls: [call], providerData: first.finish?.providerData },
            { role: 'tool', toolCallId: call.id, content: '-3 °C' },
          ],
          { reasoning: 'low' },
        ),
        neverAborted(),
      ),
    );
    expect(fake.refusals).toEqual([]);
    expect(second.text).toBe('Cold.');
    expect(second.finish?.usage.cacheReadTokens).toBeGreaterThan(0);
    expect(fake.requests[1].body.input.map((i) => i.type ?? i.role)).toEqual([
      'user',
      'reasoning',
      'function_call',
      'function_call_output',
    ]);
    expect(fake.requests[1].body.input[1]).toEqual(first.finish?.providerData?.items[0]);
  });

  it("drops another provider's data, and says length for an incomplete max_output_tokens answer", async () => {
    fake.enqueue({ kind: 'answer', text: 'Cut', incomplete: 'max_output_tokens' });
    const result = await collect(
      provider({ LLM_MAX_OUTPUT_TOKENS: '50' }).stream(
        request([
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            content: 'Hello',
            providerData: {
              provider: 'anthropic',
              items: [{ type: 'thinking', thinking: 'x', signature: 's' }],
            },
          },
          { role: 'user', content: 'more' },
        ]),
        neverAborted(),
      ),
    );
    expect(fake.refusals).toEqual([]);
    expect(fake.requests[0].body.max_output_tokens).toBe(50);
    expect(JSON.stringify(fake.requests[0].body.input)).not.toContain('thinking');
    expect(result.finish?.finishReason).toBe('length');
  });

  it("fails a 5xx retryable after one request (retries are ModelProviders'); a 400 is not retryable", async () => {
    fake.enqueue(responsesStatus(503, 'busy'));
    const failed = await collect(
      provider().stream(request([{ role: 'user', content: 'go' }]), neverAborted()),
    );
    expect(fake.requests).toHaveLength(1);
    expect(failed.error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });

    const refused = await collect(
      provider().stream(
        request([
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: null,
            toolCalls: [{ id: 'call_x', name: 'weather', arguments: '{}' }],
          },
        ]),
        neverAborted(),
      ),
    );
    expect(refused.error).toMatchObject({ code: 'UPSTREAM_BAD_REQUEST', retryable: false });
  });
});
