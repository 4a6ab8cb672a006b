import {
  FakeUpstream,
  fixture,
  hang,
  status,
  text,
  toolCalls,
  type RecordedRequest,
} from '../support/fake-upstream';

/** POSTs a chat request and returns the status and the data payloads of the SSE answer. */
async function post(upstream: FakeUpstream, body: object, signal?: AbortSignal) {
  const response = await fetch(`${upstream.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
    body: JSON.stringify(body),
    signal,
  });
  const raw = await response.text();
  const data = raw
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice('data: '.length));
  return { status: response.status, headers: response.headers, raw, data };
}

const streaming = {
  model: 'gpt-x',
  messages: [{ role: 'user', content: 'hi' }],
  stream: true,
  stream_options: { include_usage: true },
};

describe('FakeUpstream', () => {
  let upstream: FakeUpstream;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
  });
  afterEach(() => upstream.reset());
  afterAll(() => upstream.close());

  it('listens on 127.0.0.1 with a base URL ending in /v1', () => {
    expect(upstream.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  it('answers with a 500 "no scripted response" when nothing is scripted', async () => {
    const answer = await post(upstream, streaming);
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.raw)).toEqual({
      error: { message: 'no scripted response', type: 'server_error', code: null },
    });
  });

  it('records every request with its parsed body and headers, and plays scripts first in first out, then the fallback', async () => {
    upstream.enqueue(text('one'), text('two'));
    upstream.fallback = text('again');
    const contents = [];
    for (let i = 0; i < 4; i++) {
      const { data } = await post(upstream, { ...streaming, messages: [{ role: 'user', content: `#${i}` }] });
      contents.push(
        data
          .flatMap((d) =>
            d === '[DONE]'
              ? []
              : [
                  (JSON.parse(d) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta
                    .content ?? '',
                ],
          )
          .join(''),
      );
    }
    expect(contents).toEqual(['one', 'two', 'again', 'again']);
    expect(upstream.requests.map((r) => r.index)).toEqual([0, 1, 2, 3]);
    expect(upstream.requests[3].body.messages).toEqual([{ role: 'user', content: '#3' }]);
    expect(upstream.requests[0].headers.authorization).toBe('Bearer k');
    expect(upstream.pending).toBe(0);
  });

  it('lets a function choose the answer from what the model was sent', async () => {
    const reply = (request: RecordedRequest) =>
      text(`you said ${JSON.stringify(request.body.messages.at(-1)?.content)}`, { pieces: 1 });
    upstream.enqueue(reply);
    const { data } = await post(upstream, streaming);
    expect(data.join('')).toContain('you said');
    expect(data.join('')).toContain('\\"hi\\"');
  });

  it('streams real-looking chunks, a usage chunk with choices [] when include_usage was asked, then [DONE]', async () => {
    upstream.enqueue(text('Hello world', { usage: { promptTokens: 7, completionTokens: 2 } }));
    const { data, headers } = await post(upstream, streaming);
    expect(headers.get('content-type')).toContain('text/event-stream');
    expect(data[data.length - 1]).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as Record<string, unknown>);
    expect(chunks[0]).toMatchObject({
      id: 'chatcmpl-fake0',
      object: 'chat.completion.chunk',
      model: 'gpt-x',
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    });
    expect(chunks.slice(1, 3).map((c) => (c.choices as Array<{ delta: unknown }>)[0].delta)).toEqual([
      { content: 'Hello' },
      { content: ' world' },
    ]);
    expect(chunks[3]).toMatchObject({ choices: [{ delta: {}, finish_reason: 'stop' }] });
    expect(chunks[4]).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 },
    });
  });

  it('sends no usage chunk when the request did not ask for one', async () => {
    upstream.enqueue(text('Hi'));
    const { data } = await post(upstream, { ...streaming, stream_options: undefined });
    expect(data.some((d) => d.includes('"usage"'))).toBe(false);
  });

  it('splits tool-call arguments over several deltas and gives calls unique default ids', async () => {
    upstream.enqueue(
      toolCalls(
        [
          { name: 'a', arguments: { path: 'x.txt' } },
          { name: 'b', arguments: '' },
        ],
        { pieces: 3 },
      ),
    );
    const { data } = await post(upstream, streaming);
    const deltas = data
      .filter((d) => d !== '[DONE]')
      .flatMap(
        (d) =>
          (JSON.parse(d) as { choices: Array<{ delta: { tool_calls?: Array<Record<string, unknown>> } }> })
            .choices,
      )
      .flatMap((c) => c.delta.tool_calls ?? []);
    expect(deltas[0]).toEqual({
      index: 0,
      id: 'call_fake_0_0',
      type: 'function',
      function: { name: 'a', arguments: '' },
    });
    expect(
      deltas
        .slice(1, 4)
        .map((d) => (d.function as { arguments: string }).arguments)
        .join(''),
    ).toBe('{"path":"x.txt"}');
    expect(deltas[4]).toMatchObject({ index: 1, id: 'call_fake_0_1' });
    expect(data.join('')).toContain('"finish_reason":"tool_calls"');
  });

  it('spaces chunks by delayMs after firstDelayMs', async () => {
    upstream.enqueue(text('a b c', { delayMs: 30, firstDelayMs: 50 }));
    const started = Date.now();
    await post(upstream, streaming);
    // role + 3 pieces + finish + usage + [DONE] = 7 frames: 50 ms, then 6 gaps of 30 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
  });

  it('replays a fixture byte for byte, appending [DONE] only when asked', async () => {
    upstream.enqueue(
      fixture('mistral-small-tool-call-no-index.sse'),
      fixture('mistral-small-tool-call-no-index.sse', { appendDone: true }),
    );
    const plain = await post(upstream, streaming);
    const withDone = await post(upstream, streaming);
    expect(plain.data).toHaveLength(2);
    expect(withDone.data).toEqual([...plain.data, '[DONE]']);
  });

  it('answers a scripted status with its body and headers', async () => {
    upstream.enqueue(status(429, { error: { message: 'slow down' } }, { 'retry-after-ms': '10' }));
    const answer = await post(upstream, streaming);
    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after-ms')).toBe('10');
    expect(JSON.parse(answer.raw)).toEqual({ error: { message: 'slow down' } });
  });

  it('counts a hanging request as aborted once the client gives up', async () => {
    upstream.enqueue(hang());
    const controller = new AbortController();
    const pending = post(upstream, streaming, controller.signal).catch((error: unknown) => error);
    await upstream.waitForRequests(1);
    controller.abort();
    await pending;
    await upstream.waitForAborted(1);
    expect(upstream.aborted).toBe(1);
    expect(upstream.requests[0].aborted).toBe(true);
  });

  it('answers 404 to other routes', async () => {
    const response = await fetch(`${upstream.baseUrl}/models`);
    expect(response.status).toBe(404);
    await response.text();
  });
});
