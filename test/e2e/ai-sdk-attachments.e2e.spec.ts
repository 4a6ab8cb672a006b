import type { UIMessage, UIMessageChunk } from 'ai' with { 'resolution-mode': 'import' };
import { pdf, png } from '../support/attachments';
import { FakeUpstream, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';

type Ai = typeof import('ai', { with: { 'resolution-mode': 'import' } });

const PNG = png(2, 2);
const PDF = pdf('Attached with useChat');

describe("useChat's file parts through the AI SDK's own DefaultChatTransport (e2e)", () => {
  let ai: Ai;
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    ai = await import('ai');
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  async function send(chatId: string, message: UIMessage): Promise<UIMessageChunk[]> {
    const transport = new ai.DefaultChatTransport<UIMessage>({ api: `${app.url}/v1/ai-sdk/chat` });
    const stream = await transport.sendMessages({
      chatId,
      messages: [message],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    const chunks: UIMessageChunk[] = [];
    for await (const chunk of stream as unknown as AsyncIterable<UIMessageChunk>) chunks.push(chunk);
    return chunks;
  }

  it('sends a data-URL file part and a /v1/files/:id one to the model as an image and a document', async () => {
    const upload = await fetch(`${app.url}/v1/files?name=doc.pdf`, {
      method: 'POST',
      headers: { 'content-type': 'application/pdf' },
      body: PDF,
    });
    const { id } = (await upload.json()) as { id: string };
    upstream.enqueue(text('A square and a document.'));
    const chunks = await send('chat-files', {
      id: 'u1',
      role: 'user',
      parts: [
        { type: 'text', text: 'Describe these.' },
        {
          type: 'file',
          mediaType: 'image/png',
          filename: 'dot.png',
          url: `data:image/png;base64,${PNG.toString('base64')}`,
        },
        { type: 'file', mediaType: 'application/pdf', filename: 'doc.pdf', url: `/v1/files/${id}` },
      ],
    });
    expect(chunks.at(-1)).toMatchObject({ type: 'finish' });
    const user = upstream.requests[0].body.messages.find((m) => m.role === 'user');
    expect(user?.content).toEqual([
      { type: 'text', text: 'Describe these.' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
      {
        type: 'file',
        file: { filename: 'doc.pdf', file_data: `data:application/pdf;base64,${PDF.toString('base64')}` },
      },
    ]);

    // After a reload, useChat gets the prompt back with its files, as URLs of this server.
    const stored = (await (
      await fetch(`${app.url}/v1/ai-sdk/chat/chat-files/messages`)
    ).json()) as UIMessage[];
    expect(stored[0].parts).toEqual([
      { type: 'text', text: 'Describe these.' },
      {
        type: 'file',
        mediaType: 'image/png',
        filename: 'dot.png',
        url: expect.stringMatching(/^\/v1\/files\/[0-9a-f-]{36}$/),
      },
      { type: 'file', mediaType: 'application/pdf', filename: 'doc.pdf', url: `/v1/files/${id}` },
    ]);
  });
});
