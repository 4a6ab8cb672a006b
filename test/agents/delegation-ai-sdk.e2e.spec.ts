import type { UIMessage, UIMessageChunk } from 'ai' with { 'resolution-mode': 'import' };
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { agentsFile, byConversation, delegateOnce } from '../support/delegation-scripts';

type Ai = typeof import('ai', { with: { 'resolution-mode': 'import' } });

const textOf = (m: UIMessage) => m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
const WRITER = 'You are the writer.';
const ASKER = 'You ask the browser.';

describe('delegation through the AI SDK UI message stream (e2e)', () => {
  let ai: Ai;
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    ai = await import('ai');
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      AGENTS_CONFIG: agentsFile({
        writer: { description: 'Writes.', systemPrompt: WRITER, mode: 'write' },
        asker: { description: 'Asks the browser.', systemPrompt: ASKER },
      }),
    });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  const transport = (extra: Record<string, unknown> = {}) =>
    new ai.DefaultChatTransport<UIMessage>({
      api: `${app.url}/v1/ai-sdk/chat`,
      prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({
        body: { ...extra, id, messages: messages.slice(-1), trigger, messageId },
      }),
    });

  async function send(chatId: string, messages: UIMessage[], extra: Record<string, unknown> = {}) {
    const stream = await transport(extra).sendMessages({
      chatId,
      messages,
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    const chunks: UIMessageChunk[] = [];
    let last: UIMessage | undefined;
    for await (const m of ai.readUIMessageStream<UIMessage>({
      stream: stream.pipeThrough(
        new TransformStream<UIMessageChunk, UIMessageChunk>({
          transform(chunk, controller) {
            chunks.push(chunk);
            controller.enqueue(chunk);
          },
        }),
      ),
      message: messages.at(-1)?.role === 'assistant' ? messages.at(-1) : undefined,
      terminateOnError: true,
    }))
      last = m;
    return { message: last!, chunks };
  }

  it("shows a child's work as a data-subagent part and its approval as an ordinary approval of the root's message", async () => {
    upstream.fallback = byConversation((c) => {
      if (c.system === WRITER) {
        if (c.results.size === 0)
          return toolCalls([{ id: 'w1', name: 'write_file', arguments: { path: 'ai.txt', content: 'x' } }]);
        return text('Writer done.');
      }
      return delegateOnce(c, 'Root', { callId: 'r1', agent: 'writer', task: 'write ai.txt' });
    });
    const user: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Delegate it' }] };
    const first = await send('chat-delegation', [user]);
    const subagent = first.message.parts.find((p) => p.type === 'data-subagent') as any;
    expect(subagent.data).toMatchObject({ toolCallId: 'r1', agent: 'writer', status: 'running' });
    const approval = first.message.parts.find((p) => p.type === 'dynamic-tool' && p.toolCallId === 'w1')!;
    expect(approval).toMatchObject({ state: 'approval-requested', toolName: 'write_file' });
    expect(textOf(first.message)).toBe('');

    // What useChat's addToolApprovalResponse does, then sent as the next request.
    const answered: UIMessage = {
      ...first.message,
      parts: first.message.parts.map((p) =>
        p === approval
          ? ({ ...p, state: 'approval-responded', approval: { id: 'w1', approved: true } } as typeof p)
          : p,
      ),
    };
    const second = await send('chat-delegation', [user, answered]);
    expect(textOf(second.message)).toBe('Root: Writer done.');
    const parts = second.message.parts.filter((p) => p.type === 'data-subagent') as any[];
    expect(parts).toHaveLength(1);
    expect(parts[0].data).toMatchObject({
      status: 'completed',
      text: 'Writer done.',
      childRunId: subagent.data.childRunId,
    });
    expect(second.chunks.at(-1)).toMatchObject({ type: 'finish', messageMetadata: { status: 'completed' } });
  });

  it("hands a child's client-tool call to the client as a call of the root's message, and its output answers the child", async () => {
    const clientTools = [
      {
        type: 'function',
        function: { name: 'get_browser_time', parameters: { type: 'object', properties: {} } },
      },
    ];
    upstream.fallback = byConversation((c) => {
      if (c.system === ASKER) {
        if (c.results.size === 0) return toolCalls([{ id: 'bt1', name: 'get_browser_time', arguments: {} }]);
        return text(`The browser says ${c.results.get('bt1')}.`);
      }
      return delegateOnce(c, 'Root', { callId: 'r2', agent: 'asker', task: 'ask the time' });
    });
    const user: UIMessage = { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'What time is it?' }] };
    const first = await send('chat-child-client-tool', [user], { clientTools });
    const call = first.message.parts.find((p) => p.type === 'tool-get_browser_time')!;
    expect(call).toMatchObject({ state: 'input-available', toolCallId: 'bt1' });
    expect(first.chunks.at(-1)).toMatchObject({
      type: 'finish',
      messageMetadata: { status: 'requires_action' },
    });

    // What useChat's addToolOutput does, then sent as the next request.
    const answered: UIMessage = {
      ...first.message,
      parts: first.message.parts.map((p) =>
        p === call ? ({ ...p, state: 'output-available', output: '12:00' } as typeof p) : p,
      ),
    };
    const second = await send('chat-child-client-tool', [user, answered], { clientTools });
    expect(textOf(second.message)).toBe('Root: The browser says 12:00.');
    expect(second.chunks.some((c) => c.type === 'tool-output-available' && c.toolCallId === 'bt1')).toBe(
      false,
    );
    expect(second.chunks.at(-1)).toMatchObject({ type: 'finish', messageMetadata: { status: 'completed' } });
  });
});
