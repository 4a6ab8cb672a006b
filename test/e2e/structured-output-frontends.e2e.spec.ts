import type { BaseEvent } from '@ag-ui/core';
import { HttpAgent } from '@ag-ui/client';
import type { UIMessage, UIMessageChunk } from 'ai' with { 'resolution-mode': 'import' };
import { FakeUpstream, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';

type Ai = typeof import('ai', { with: { 'resolution-mode': 'import' } });

const ALICE = 'Bearer alice-secret-123';
const responseFormat = {
  type: 'json_schema',
  schema: { type: 'object', properties: { severity: { type: 'string' } }, required: ['severity'] },
};
const output = { severity: 'high' };

/** done.output through the frontend protocols' own clients: the AI SDK's data-output, AG-UI's STATE_SNAPSHOT. */
describe('structured output in the frontend protocols (e2e)', () => {
  let ai: Ai;
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    ai = await import('ai');
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, API_KEYS: 'alice:alice-secret-123' });
  });
  afterAll(async () => {
    await app?.close();
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  it("the AI SDK's DefaultChatTransport: a data-output part before the finish, in the message readUIMessageStream builds", async () => {
    upstream.enqueue(text(JSON.stringify(output)));
    const transport = new ai.DefaultChatTransport<UIMessage>({
      api: `${app.url}/v1/ai-sdk/chat`,
      headers: { Authorization: ALICE },
      // SessionOptions of a new chat, as clients send them with the transport's body.
      body: { responseFormat },
    });
    const stream = await transport.sendMessages({
      chatId: 'chat-structured',
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Rate it.' }] }],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    const chunks: UIMessageChunk[] = [];
    let message: UIMessage | undefined;
    for await (const m of ai.readUIMessageStream<UIMessage>({
      stream: stream.pipeThrough(
        new TransformStream<UIMessageChunk, UIMessageChunk>({
          transform(chunk, controller) {
            chunks.push(chunk);
            controller.enqueue(chunk);
          },
        }),
      ),
      terminateOnError: true,
    }))
      message = m;
    expect(chunks.slice(-2).map((c) => c.type)).toEqual(['data-output', 'finish']);
    expect(message!.parts).toContainEqual(expect.objectContaining({ type: 'data-output', data: { output } }));
    expect(upstream.requests[0].body.response_format).toMatchObject({ type: 'json_schema' });
  });

  it("AG-UI's HttpAgent: a STATE_SNAPSHOT of { output } before RUN_FINISHED, the agent's state set by it", async () => {
    upstream.enqueue(text(JSON.stringify(output)));
    const agent = new HttpAgent({
      url: `${app.url}/v1/ag-ui`,
      headers: { Authorization: ALICE },
      threadId: 'thread-structured',
    });
    agent.addMessage({ id: 'u1', role: 'user', content: 'Rate it.' });
    const events: BaseEvent[] = [];
    await agent.runAgent(
      { forwardedProps: { responseFormat } },
      { onEvent: ({ event }) => void events.push(event) },
    );
    expect(events.slice(-2).map((e) => e.type)).toEqual(['STATE_SNAPSHOT', 'RUN_FINISHED']);
    expect(agent.state).toEqual({ output });
  });
});
