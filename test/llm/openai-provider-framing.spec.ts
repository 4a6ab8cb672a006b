import { OpenAiProvider } from '../../src/llm/providers/openai/openai.provider';
import { FakeUpstream, raw } from '../support/fake-upstream';
import { chatChunk, SSE_DONE } from '../support/sse-chunks';
import { collect, llmConfig, neverAborted, userRequest } from './llm-harness';

/** SSE framing variants seen in the wild (SOURCES.md, "SSE framing and termination"), through the real SDK. */
describe('OpenAiProvider SSE framing', () => {
  let upstream: FakeUpstream;
  let provider: OpenAiProvider;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    provider = new OpenAiProvider(llmConfig(upstream.baseUrl));
  });
  afterEach(() => upstream.reset());
  afterAll(() => upstream.close());

  const hello = JSON.stringify(chatChunk({ role: 'assistant', content: 'Hello' }));
  const stop = JSON.stringify(chatChunk({}, 'stop'));

  async function replay(sse: string) {
    upstream.enqueue(raw(sse));
    const result = await collect(provider.stream(userRequest('hi'), neverAborted()));
    expect(result.error).toBeUndefined();
    return result;
  }

  it('skips keep-alive comment lines before and between events', async () => {
    const result = await replay(
      `: OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\ndata: ${hello}\n\n: ping\n\ndata: ${stop}\n\n${SSE_DONE}`,
    );
    expect(result.text).toBe('Hello');
  });

  it('reads data: without a space after the colon', async () => {
    expect((await replay(`data:${hello}\n\ndata:${stop}\n\n`)).text).toBe('Hello');
  });

  it('reads CRLF line endings', async () => {
    expect((await replay(`data: ${hello}\r\n\r\ndata: ${stop}\r\n\r\n`)).text).toBe('Hello');
  });

  it('dispatches a last event that lacks its blank line', async () => {
    expect((await replay(`data: ${hello}\n\ndata: ${stop}`)).finish?.finishReason).toBe('stop');
  });

  it('hands the text of chunks that arrive together to the loop as one delta', async () => {
    const world = JSON.stringify(chatChunk({ content: ' world' }));
    const result = await replay(`data: ${hello}\n\ndata: ${world}\n\ndata: ${stop}\n\n${SSE_DONE}`);
    expect(result.events).toEqual([
      { type: 'text', delta: 'Hello world' },
      expect.objectContaining({ type: 'finish', finishReason: 'stop' }),
    ]);
  });

  it('ignores event:, id: and retry: fields on OpenAI-style streams', async () => {
    expect(
      (await replay(`retry: 1000\nid: 1\nevent: chunk\ndata: ${hello}\n\nid: 2\ndata: ${stop}\n\n`)).text,
    ).toBe('Hello');
  });
});
