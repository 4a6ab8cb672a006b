import { loadConfig } from '../../src/config/app-config';
import type { ModelRequest } from '../../src/llm/model-provider';
import { AnthropicProvider } from '../../src/llm/providers/anthropic/anthropic.provider';
import { SSE_EVENT_MAX_CHARS } from '../../src/llm/sse-parser';
import { STREAM_LIMITS } from '../../src/llm/stream-budget';
import { anthropicSignatureFlood, anthropicText, FakeAnthropic } from '../support/fake-anthropic';
import { eventually } from '../support/eventually';
import { collect, neverAborted } from './llm-harness';

const MiB = 1024 * 1024;

/**
 * What an Anthropic stream makes the server hold is bounded: the opaque state it would keep and send
 * back (thinking signatures, redacted_thinking data) by STREAM_LIMITS.providerDataMaxChars, one SSE
 * event by SSE_EVENT_MAX_CHARS. Past a bound the request is closed and nothing of that state is kept.
 */
describe('AnthropicProvider holds a hostile stream to its bounds', () => {
  let fake: FakeAnthropic;

  beforeAll(async () => {
    fake = await FakeAnthropic.start();
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const provider = () =>
    new AnthropicProvider(
      loadConfig(
        { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: fake.baseUrl, LLM_MAX_RETRIES: '0' },
        '/tmp',
      ),
    );
  const request: ModelRequest = {
    model: 'claude-test',
    messages: [{ role: 'user', content: 'go' }],
    tools: [],
    reasoning: 'high',
  };

  it('cuts a thinking block whose signature passes the bound: length, the request closed, no thinking kept to send back', async () => {
    const total = 32 * MiB;
    fake.enqueue(anthropicSignatureFlood(total, 256 * 1024, 'never read'));
    const result = await collect(provider().stream(request, neverAborted()));
    expect(result.error).toBeUndefined();
    expect(result.finish).toMatchObject({ finishReason: 'length', toolCalls: [] });
    expect(result.finish?.providerData).toBeUndefined();
    expect(result.reasoning).toBe('Hmm.');
    expect(result.text).toBe('');
    // The server stopped reading: the fake saw the request closed long before its end.
    await eventually(() => fake.closedEarly === 1);
    expect(fake.streamedBytes).toBeLessThan(total / 2);
  });

  it('cuts a redacted_thinking block whose data passes the bound', async () => {
    const data = 'R'.repeat(STREAM_LIMITS.providerDataMaxChars + 1);
    fake.enqueue({
      kind: 'stream',
      events: function* () {
        yield {
          type: 'message_start',
          message: {
            id: 'm',
            type: 'message',
            role: 'assistant',
            content: [],
            usage: { input_tokens: 1, output_tokens: 1 },
          },
        };
        yield { type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data } };
        yield { type: 'content_block_stop', index: 0 };
        yield { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } };
        yield { type: 'message_stop' };
      },
    });
    const result = await collect(provider().stream(request, neverAborted()));
    expect(result.error).toBeUndefined();
    expect(result.finish).toMatchObject({ finishReason: 'length' });
    expect(result.finish?.providerData).toBeUndefined();
  });

  it('keeps a thinking block within the bound, signed, to send back', async () => {
    fake.enqueue(anthropicText('Fine.', 'Short thought.'));
    const result = await collect(provider().stream(request, neverAborted()));
    expect(result.finish?.finishReason).toBe('stop');
    expect(result.finish?.providerData?.items).toEqual([
      { type: 'thinking', thinking: 'Short thought.', signature: fake.signature('Short thought.') },
    ]);
  });

  it('refuses one SSE event longer than SSE_EVENT_MAX_CHARS instead of reading it whole', async () => {
    const huge = 'S'.repeat(SSE_EVENT_MAX_CHARS + MiB);
    fake.enqueue({
      kind: 'stream',
      events: function* () {
        yield { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: huge } };
        yield { type: 'message_stop' };
      },
    });
    const result = await collect(provider().stream(request, neverAborted()));
    expect(result.error).toMatchObject({ code: 'UPSTREAM_MALFORMED' });
    expect(String((result.error as Error).message)).toMatch(/SSE event longer than/);
  });
});
