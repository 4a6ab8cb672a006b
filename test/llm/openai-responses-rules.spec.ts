import OpenAI, { BadRequestError } from 'openai';
import { loadConfig } from '../../src/config/app-config';
import type { ModelRequest } from '../../src/llm/model-provider';
import { OpenAiResponsesProvider } from '../../src/llm/providers/openai-responses/openai-responses.provider';
import { FakeResponses, responsesText } from '../support/fake-responses';
import { eventually } from '../support/eventually';
import { collect, neverAborted, WEATHER_TOOL } from './llm-harness';

const MiB = 1024 * 1024;

describe('FakeResponses refuses, as the real API does, reasoning parameters from a model that does not reason', () => {
  let fake: FakeResponses;
  let client: OpenAI;

  beforeAll(async () => {
    fake = await FakeResponses.start();
    client = new OpenAI({ apiKey: 'sk-test', baseURL: fake.baseUrl, maxRetries: 0 });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  async function refused(params: Parameters<OpenAI['responses']['create']>[0]): Promise<BadRequestError> {
    const error: unknown = await client.responses.create(params).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BadRequestError);
    return error as BadRequestError;
  }

  it('refuses include: reasoning.encrypted_content and reasoning.effort for gpt-4.1 and gpt-4o, not for gpt-5', async () => {
    const include = await refused({
      model: 'gpt-4.1-mini',
      input: 'hi',
      store: false,
      include: ['reasoning.encrypted_content'],
    });
    expect(include.message).toMatch(/Encrypted content is not supported with this model/);
    expect(include.param).toBe('include');
    const effort = await refused({
      model: 'gpt-4o',
      input: 'hi',
      store: false,
      reasoning: { effort: 'low' },
    });
    expect(effort.message).toMatch(/'reasoning.effort' is not supported with this model/);

    fake.enqueue(responsesText('Hello.', 'Greet.'));
    const response = await client.responses
      .stream({
        model: 'gpt-5-mini',
        input: 'hi',
        store: false,
        include: ['reasoning.encrypted_content'],
        reasoning: { effort: 'low' },
      })
      .finalResponse();
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(fake.refusals).toEqual([
      'Encrypted content is not supported with this model.',
      expect.any(String),
    ]);
  });
});

describe('OpenAiResponsesProvider: within the real API’s rules and its bounds', () => {
  let fake: FakeResponses;

  beforeAll(async () => {
    fake = await FakeResponses.start();
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const provider = () =>
    new OpenAiResponsesProvider(
      loadConfig({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: fake.baseUrl, LLM_MAX_RETRIES: '0' }, '/tmp'),
    );
  const request = (model: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({
    model,
    messages: [{ role: 'user', content: 'Oslo?' }],
    tools: [WEATHER_TOOL],
    reasoning: 'high',
    ...extra,
  });

  it('asks only a model that reasons for its encrypted reasoning and an effort', async () => {
    fake.enqueue(responsesText('Cold.'), responsesText('Cold.', 'Look it up.'));
    for (const model of ['gpt-4.1-mini', 'o4-mini']) {
      const result = await collect(provider().stream(request(model), neverAborted()));
      expect(result.error).toBeUndefined();
      expect(result.text).toBe('Cold.');
    }
    expect(fake.refusals).toEqual([]);
    const [plain, reasoning] = fake.requests.map((r) => r.body);
    expect(plain).not.toHaveProperty('include');
    expect(plain).not.toHaveProperty('reasoning');
    expect(reasoning).toMatchObject({
      include: ['reasoning.encrypted_content'],
      reasoning: { effort: 'high', summary: 'auto' },
    });
  });

  it('refuses an SSE line longer than the shared bound and closes the request', async () => {
    fake.enqueue({ kind: 'long-line', chars: 64 * MiB });
    const result = await collect(provider().stream(request('gpt-5-mini'), neverAborted()));
    expect(result.error).toMatchObject({ code: 'UPSTREAM_MALFORMED', retryable: false });
    expect((result.error as Error).message).toMatch(/SSE event longer than/);
    await eventually(() => fake.requests[0].aborted);
  });

  it('keeps reasoning items within their bound; past it, none: the answer is cut, the next request small', async () => {
    fake.enqueue(
      {
        kind: 'answer',
        reasoning: 'Think.',
        reasoningItems: 3,
        encryptedChars: 256 * 1024,
        calls: [{ name: 'weather', arguments: { location: 'Oslo' } }],
      },
      responsesText('Cold.'),
    );
    const kept = await collect(provider().stream(request('gpt-5-mini'), neverAborted()));
    expect(kept.finish).toMatchObject({ finishReason: 'tool_calls' });
    expect(kept.finish?.providerData?.items).toHaveLength(3);
    const call = kept.toolCalls[0];
    const sent = await collect(
      provider().stream(
        request('gpt-5-mini', {
          messages: [
            { role: 'user', content: 'Oslo?' },
            { role: 'assistant', content: null, toolCalls: [call], providerData: kept.finish?.providerData },
            { role: 'tool', toolCallId: call.id, content: '-3 °C' },
          ],
        }),
        neverAborted(),
      ),
    );
    expect(fake.refusals).toEqual([]);
    expect(sent.text).toBe('Cold.');
    expect(fake.requests[1].body.input.filter((item) => item.type === 'reasoning')).toHaveLength(3);

    fake.enqueue({
      kind: 'answer',
      reasoning: 'Think.',
      reasoningItems: 6,
      encryptedChars: 8 * MiB,
      calls: [{ name: 'weather', arguments: { location: 'Oslo' } }],
    });
    const first = await collect(provider().stream(request('gpt-5-mini'), neverAborted()));
    expect(first.error).toBeUndefined();
    expect(first.finish).toMatchObject({ finishReason: 'length', toolCalls: [] });
    expect(first.finish?.providerData).toBeUndefined();
    await eventually(() => fake.requests[2].aborted);

    fake.enqueue(responsesText('Cold.'));
    const second = await collect(
      provider().stream(
        request('gpt-5-mini', {
          messages: [
            { role: 'user', content: 'Oslo?' },
            { role: 'assistant', content: '', providerData: first.finish?.providerData },
            { role: 'user', content: 'Well?' },
          ],
        }),
        neverAborted(),
      ),
    );
    expect(second.text).toBe('Cold.');
    expect(fake.requests[3].body.input.filter((item) => item.type === 'reasoning')).toEqual([]);
    expect(JSON.stringify(fake.requests[3].body).length).toBeLessThan(10_000);
  });
});
