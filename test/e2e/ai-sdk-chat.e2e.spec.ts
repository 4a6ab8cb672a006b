import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UIMessage, UIMessageChunk } from 'ai' with { 'resolution-mode': 'import' };
import { FakeUpstream, chunksThen, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';

type Ai = typeof import('ai', { with: { 'resolution-mode': 'import' } });

const ALICE = 'Bearer alice-secret-123';
const BOB = 'Bearer bob-secret-456';

function userMessage(id: string, content: string): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text: content }] };
}

const textOf = (m: UIMessage) => m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');

describe('POST /v1/ai-sdk/chat with the AI SDK DefaultChatTransport (e2e)', () => {
  let ai: Ai;
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    ai = await import('ai');
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      API_KEYS: 'alice:alice-secret-123,bob:bob-secret-456',
    });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  function transport(authorization = ALICE, body: Record<string, unknown> = {}) {
    return new ai.DefaultChatTransport<UIMessage>({
      api: `${app.url}/v1/ai-sdk/chat`,
      headers: { Authorization: authorization },
      body,
      // The recommended recipe: the stored conversation is the truth, only the last message is sent.
      prepareSendMessagesRequest: ({ id, messages, trigger, messageId, body: extra }) => ({
        body: { ...extra, id, messages: messages.slice(-1), trigger, messageId },
      }),
    });
  }

  /** Every message state readUIMessageStream produced, and the chunks themselves. */
  async function read(stream: ReadableStream<UIMessageChunk>, message?: UIMessage) {
    const chunks: UIMessageChunk[] = [];
    const tapped = stream.pipeThrough(
      new TransformStream<UIMessageChunk, UIMessageChunk>({
        transform(chunk, controller) {
          chunks.push(chunk);
          controller.enqueue(chunk);
        },
      }),
    );
    let last: UIMessage | undefined;
    for await (const m of ai.readUIMessageStream<UIMessage>({
      stream: tapped,
      message,
      terminateOnError: true,
    }))
      last = m;
    return { message: last!, chunks };
  }

  async function send(chatId: string, messages: UIMessage[], t = transport()) {
    const stream = await t.sendMessages({
      chatId,
      messages,
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    return read(stream, messages.at(-1)?.role === 'assistant' ? messages.at(-1) : undefined);
  }

  async function runOf(runId: string, authorization = ALICE) {
    const res = await fetch(`${app.url}/v1/runs/${runId}`, { headers: { authorization } });
    return (await res.json()) as { status: string; sessionId: string; pendingToolCalls: unknown[] };
  }

  it('answers the last prompt again on regenerate-message: a new run, the prompt stored once, the old answer out of the conversation', async () => {
    upstream.enqueue(text('First answer.'), text('Second answer.'));
    const first = await send('chat-regen', [userMessage('u1', 'Tell me something')]);
    expect(textOf(first.message)).toBe('First answer.');

    // What useChat sends for regenerate: the messages up to the prompt, trigger regenerate-message.
    const stream = await transport().sendMessages({
      chatId: 'chat-regen',
      messages: [userMessage('u1', 'Tell me something')],
      trigger: 'regenerate-message',
      messageId: first.message.id,
      abortSignal: undefined,
    });
    const second = await read(stream);
    expect(textOf(second.message)).toBe('Second answer.');
    expect(second.message.id).not.toBe(first.message.id);

    // The model saw the prompt, not the answer it replaces.
    const sent = (upstream.requests[1].body as { messages: { role: string; content: unknown }[] }).messages;
    expect(sent.at(-1)).toMatchObject({ role: 'user', content: 'Tell me something' });
    expect(JSON.stringify(sent)).not.toContain('First answer.');
    // The stored conversation: the prompt once, then the new answer.
    const { sessionId } = await runOf(second.message.id);
    const session = (await (
      await fetch(`${app.url}/v1/sessions/${sessionId}`, { headers: { authorization: ALICE } })
    ).json()) as { messages: { role: string; content: string | null }[] };
    expect(session.messages.filter((m) => m.role !== 'system')).toMatchObject([
      { role: 'user', content: 'Tell me something' },
      { role: 'assistant', content: 'Second answer.' },
    ]);
  });

  it('streams a text answer as a UI message whose id is the run id, and the run is an ordinary run', async () => {
    upstream.enqueue(text('Hello from Loopwright.'));
    const { message, chunks } = await send('chat-text', [userMessage('u1', 'Say hello')]);

    expect(textOf(message)).toBe('Hello from Loopwright.');
    // Text that reaches the server between two writes is one delta, so the pieces depend on timing.
    expect(chunks.map((c) => c.type).filter((t, i, all) => t !== all[i - 1])).toEqual([
      'start',
      'start-step',
      'text-start',
      'text-delta',
      'text-end',
      'finish-step',
      'finish',
    ]);
    const start = chunks[0] as Extract<UIMessageChunk, { type: 'start' }>;
    const meta = start.messageMetadata as { runId: string; sessionId: string };
    expect(start.messageId).toBe(meta.runId);
    expect(message.id).toBe(meta.runId);
    expect(chunks.at(-1)).toMatchObject({
      type: 'finish',
      finishReason: 'stop',
      messageMetadata: { runId: meta.runId, sessionId: meta.sessionId, status: 'completed' },
    });
    expect(await runOf(meta.runId)).toMatchObject({ status: 'completed', sessionId: meta.sessionId });

    // The same chat id continues the same session: the model sees the stored conversation.
    upstream.enqueue(text('Again.'));
    const second = await send('chat-text', [userMessage('u2', 'Once more')]);
    const secondMeta = (second.chunks[0] as { messageMetadata: { sessionId: string } }).messageMetadata;
    expect(secondMeta.sessionId).toBe(meta.sessionId);
    const sent = upstream.requests.at(-1)!.body as { messages: { role: string; content: unknown }[] };
    expect(sent.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
  });

  it('shows a server tool as a dynamic tool part with its output', async () => {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(app.workspace, 'notes.txt'), 'the notes\n');
    upstream.enqueue(
      toolCalls([{ id: 'call_read', name: 'read_file', arguments: { path: 'notes.txt' } }]),
      text('It holds notes.'),
    );
    const { message, chunks } = await send('chat-server-tool', [userMessage('u1', 'Read notes.txt')]);

    const tool = message.parts.find((p) => p.type === 'dynamic-tool');
    expect(tool).toMatchObject({
      type: 'dynamic-tool',
      toolName: 'read_file',
      toolCallId: 'call_read',
      state: 'output-available',
      input: { path: 'notes.txt' },
    });
    expect(String((tool as { output: unknown }).output)).toContain('the notes');
    expect(textOf(message)).toBe('It holds notes.');
    expect(chunks.filter((c) => c.type === 'start-step')).toHaveLength(2);
    expect(chunks.filter((c) => c.type === 'finish-step')).toHaveLength(2);
  });

  async function approvalRound(chatId: string, approved: boolean, reason?: string) {
    upstream.enqueue(
      toolCalls([
        {
          id: `call_${chatId}`,
          name: 'write_file',
          arguments: { path: `${chatId}.txt`, content: 'written' },
        },
      ]),
      text(approved ? 'Written.' : 'Not written.'),
    );
    const user = userMessage('u1', 'Write a file');
    const first = await send(chatId, [user]);
    const runId = first.message.id;
    const part = first.message.parts.find((p) => p.type === 'dynamic-tool')!;
    expect(part).toMatchObject({ state: 'approval-requested', approval: { id: `call_${chatId}` } });
    expect(first.chunks.at(-1)).toMatchObject({
      type: 'finish',
      finishReason: 'tool-calls',
      messageMetadata: { status: 'requires_action' },
    });
    expect((await runOf(runId)).status).toBe('requires_action');

    // What useChat's addToolApprovalResponse does to the part, then sent as the next request.
    const answered: UIMessage = {
      ...first.message,
      parts: first.message.parts.map((p) =>
        p === part
          ? ({
              ...p,
              state: 'approval-responded',
              approval: { id: `call_${chatId}`, approved, reason },
            } as typeof p)
          : p,
      ),
    };
    const second = await send(chatId, [user, answered]);
    return { runId, first, second };
  }

  async function storedMessages(chatId: string, authorization = ALICE) {
    const res = await fetch(`${app.url}/v1/ai-sdk/chat/${encodeURIComponent(chatId)}/messages`, {
      headers: { authorization },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as UIMessage[];
  }

  /** What the client's messages hold: ids, roles and parts (metadata is the stream's to update). */
  const shapes = (messages: UIMessage[]) => messages.map(({ id, role, parts }) => ({ id, role, parts }));

  it('serves the stored conversation as the UIMessage[] the streams built: text, server tools, approvals, denials', async () => {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(app.workspace, 'reload.txt'), 'reloaded notes\n');
    upstream.enqueue(
      toolCalls([{ id: 'call_reload_read', name: 'read_file', arguments: { path: 'reload.txt' } }]),
      text('It holds **notes**.'),
    );
    const u1 = userMessage('u1', 'Read reload.txt');
    const first = await send('chat-stored', [u1]);
    const { runId: approvedRun, first: waiting, second: approved } = await approvalRound('chat-stored', true);
    const stored = await storedMessages('chat-stored');

    // The same part shapes as the streams, one assistant message per run (its id the run id).
    const validated = await ai.safeValidateUIMessages({ messages: stored });
    expect(validated.success).toBe(true);
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(shapes(stored.filter((m) => m.role === 'assistant'))).toEqual(
      shapes([first.message, approved.message]),
    );
    expect(stored[1].id).toBe(first.message.id);
    expect(stored[3].id).toBe(approvedRun);
    expect(stored[0].parts).toEqual([{ type: 'text', text: 'Read reload.txt' }]);
    expect(stored[3].metadata).toMatchObject({ runId: approvedRun });
    // While it waited, the same route showed the approval still requested, as the stream left it.
    expect(waiting.message.parts.find((p) => p.type === 'dynamic-tool')).toMatchObject({
      state: 'approval-requested',
    });

    const { second: denied } = await approvalRound('chat-stored-denied', false, 'not now');
    const deniedStored = await storedMessages('chat-stored-denied');
    expect(shapes(deniedStored.slice(1))).toEqual(shapes([denied.message]));
    expect(deniedStored[1].parts.find((p) => p.type === 'dynamic-tool')).toMatchObject({
      state: 'output-denied',
      approval: { approved: false, reason: 'not now' },
    });
  });

  it('serves a waiting approval as approval-requested and a client call as input-available; [] for an unused chat id', async () => {
    upstream.enqueue(
      toolCalls([{ id: 'call_wait', name: 'write_file', arguments: { path: 'wait.txt', content: 'x' } }]),
    );
    const waiting = await send('chat-stored-waiting', [userMessage('u1', 'Write')]);
    const stored = await storedMessages('chat-stored-waiting');
    expect(shapes(stored.slice(1))).toEqual(shapes([waiting.message]));
    expect(stored[1].parts.find((p) => p.type === 'dynamic-tool')).toMatchObject({
      state: 'approval-requested',
      approval: { id: 'call_wait' },
      input: { path: 'wait.txt', content: 'x' },
    });
    await fetch(`${app.url}/v1/runs/${waiting.message.id}/cancel`, {
      method: 'POST',
      headers: { authorization: ALICE },
    });

    const clientTools = [
      { type: 'function', function: { name: 'pick_color', parameters: { type: 'object', properties: {} } } },
    ];
    upstream.enqueue(toolCalls([{ id: 'call_color', name: 'pick_color', arguments: {} }]));
    const t = transport(ALICE, { clientTools });
    const client = await send('chat-stored-client', [userMessage('u1', 'Pick a color')], t);
    const clientStored = await storedMessages('chat-stored-client');
    expect(shapes(clientStored.slice(1))).toEqual(shapes([client.message]));
    expect(clientStored[1].parts.find((p) => p.type === 'tool-pick_color')).toMatchObject({
      state: 'input-available',
      toolCallId: 'call_color',
    });
    await fetch(`${app.url}/v1/runs/${client.message.id}/cancel`, {
      method: 'POST',
      headers: { authorization: ALICE },
    });

    expect(await storedMessages('chat-never-used')).toEqual([]);
    // Another key's chat of that name is not this key's.
    expect(await storedMessages('chat-stored-client', BOB)).toEqual([]);
  });

  it('runs a write the person approved, continuing the same message', async () => {
    const { runId, second } = await approvalRound('chat-approve', true);
    expect(second.message.id).toBe(runId);
    expect(second.message.parts.find((p) => p.type === 'dynamic-tool')).toMatchObject({
      state: 'output-available',
    });
    expect(textOf(second.message)).toBe('Written.');
    expect(readFileSync(join(app.workspace, 'chat-approve.txt'), 'utf8')).toBe('written');
    expect((await runOf(runId)).status).toBe('completed');
  });

  it('shows a refused write as denied, and the model hears the reason', async () => {
    const { runId, second } = await approvalRound('chat-refuse', false, 'not today');
    expect(second.chunks.map((c) => c.type)).toContain('tool-output-denied');
    expect(second.message.parts.find((p) => p.type === 'dynamic-tool')).toMatchObject({
      state: 'output-denied',
    });
    const toolMessage = (
      upstream.requests.at(-1)!.body as { messages: { role: string; content: string }[] }
    ).messages.at(-1)!;
    expect(toolMessage).toMatchObject({ role: 'tool' });
    expect(toolMessage.content).toContain('not today');
    expect((await runOf(runId)).status).toBe('completed');
  });

  it('decides a message carrying the same approval twice all or none: 400, every call still waiting', async () => {
    upstream.enqueue(
      toolCalls([
        { id: 'call_dup_a', name: 'write_file', arguments: { path: 'dup-a.txt', content: 'a' } },
        { id: 'call_dup_b', name: 'write_file', arguments: { path: 'dup-b.txt', content: 'b' } },
      ]),
      text('Both written.'),
    );
    const user = userMessage('u1', 'Write two files');
    const first = await send('chat-dup-approval', [user]);
    const runId = first.message.id;
    const tools = first.message.parts.filter((p) => p.type === 'dynamic-tool');
    expect(tools).toHaveLength(2);
    const responded = (p: (typeof tools)[number]) =>
      ({ ...p, state: 'approval-responded', approval: { id: p.toolCallId, approved: true } }) as typeof p;
    const post = (parts: unknown[]) =>
      fetch(`${app.url}/v1/ai-sdk/chat`, {
        method: 'POST',
        headers: { authorization: ALICE, 'content-type': 'application/json' },
        body: JSON.stringify({
          id: 'chat-dup-approval',
          trigger: 'submit-message',
          messages: [{ ...first.message, parts }],
        }),
      });

    const twice = await post([responded(tools[0]), responded(tools[0]), responded(tools[1])]);
    expect(twice.status).toBe(400);
    const run = await runOf(runId);
    expect(run.status).toBe('requires_action');
    expect(run.pendingToolCalls).toHaveLength(2);
    expect(existsSync(join(app.workspace, 'dup-a.txt'))).toBe(false);

    const once = await post([responded(tools[0]), responded(tools[1])]);
    expect(once.status).toBe(200);
    await once.text();
    expect((await runOf(runId)).status).toBe('completed');
    expect(readFileSync(join(app.workspace, 'dup-a.txt'), 'utf8')).toBe('a');
  });

  it('takes a chat id of any length the contract allows on the resume route (never 414)', async () => {
    const resume = (chatId: string) =>
      fetch(`${app.url}/v1/ai-sdk/chat/${chatId}/stream`, { headers: { authorization: ALICE } });
    expect((await resume('c'.repeat(150))).status).toBe(204);
    expect((await resume('c'.repeat(200))).status).toBe(204);
    expect((await resume('c'.repeat(201))).status).toBe(400);
    expect((await resume('c'.repeat(8000))).status).toBe(400);
  });

  it('hands a client tool to the client and continues with the output it adds', async () => {
    const clientTools = [
      {
        type: 'function',
        function: { name: 'get_browser_time', parameters: { type: 'object', properties: {} } },
      },
    ];
    upstream.enqueue(
      toolCalls([{ id: 'call_time', name: 'get_browser_time', arguments: {} }]),
      text('It is noon.'),
    );
    const t = transport(ALICE, { clientTools });
    const user = userMessage('u1', 'What time is it?');
    const first = await send('chat-client-tool', [user], t);
    const part = first.message.parts.find((p) => p.type === 'tool-get_browser_time')!;
    expect(part).toMatchObject({ state: 'input-available', toolCallId: 'call_time' });

    // addToolOutput's effect on the message.
    const answered: UIMessage = {
      ...first.message,
      parts: first.message.parts.map((p) =>
        p === part ? ({ ...p, state: 'output-available', output: '12:00' } as typeof p) : p,
      ),
    };
    const second = await send('chat-client-tool', [user, answered], t);
    expect(second.chunks.some((c) => c.type === 'tool-output-available')).toBe(false);
    expect(textOf(second.message)).toBe('It is noon.');
    const toolMessage = (
      upstream.requests.at(-1)!.body as { messages: { role: string; content: string }[] }
    ).messages.at(-1)!;
    expect(toolMessage).toMatchObject({ role: 'tool', content: '12:00', tool_call_id: 'call_time' });
  });

  it('resumes a run after the reader went away, with every piece of text exactly once', async () => {
    upstream.enqueue(chunksThen(['Hel', 'lo ', 'wor', 'ld'], 'hang'));
    const aborter = new AbortController();
    const stream = await transport().sendMessages({
      chatId: 'chat-reload',
      messages: [userMessage('u1', 'Greet')],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: aborter.signal,
    });
    const reader = stream.getReader();
    let runId = '';
    for (;;) {
      const { value } = await reader.read();
      if (value?.type === 'start') runId = (value.messageMetadata as { runId: string }).runId;
      if (value?.type === 'text-delta') break;
    }
    aborter.abort();
    await reader.cancel().catch(() => undefined);

    // A reloaded page: useChat({ resume: true }) calls reconnectToStream with nothing in memory.
    const resumed = await transport().reconnectToStream({ chatId: 'chat-reload' });
    expect(resumed).not.toBeNull();
    const chunks: UIMessageChunk[] = [];
    const all = resumed!.getReader();
    let seen = '';
    for (;;) {
      const { value, done } = await all.read();
      if (done) break;
      chunks.push(value);
      if (value.type === 'text-delta') seen += value.delta;
      if (seen === 'Hello world') {
        await fetch(`${app.url}/v1/runs/${runId}/cancel`, {
          method: 'POST',
          headers: { authorization: ALICE },
        });
      }
    }
    const message = await read(
      new ReadableStream<UIMessageChunk>({
        start(c) {
          for (const chunk of chunks) c.enqueue(chunk);
          c.close();
        },
      }),
    );
    expect(message.message.id).toBe(runId);
    expect(textOf(message.message)).toBe('Hello world');
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'interrupted' });
    // Nothing runs any more: no stream to resume.
    expect(await transport().reconnectToStream({ chatId: 'chat-reload' })).toBeNull();
  });

  it("keeps one key's chat id invisible to another key, which gets its own session", async () => {
    upstream.enqueue(chunksThen(['Alice only'], 'hang'));
    const aborter = new AbortController();
    const stream = await transport(ALICE).sendMessages({
      chatId: 'shared-name',
      messages: [userMessage('u1', 'Hi')],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: aborter.signal,
    });
    const reader = stream.getReader();
    let alice = { runId: '', sessionId: '' };
    for (;;) {
      const { value } = await reader.read();
      if (value?.type === 'start') alice = value.messageMetadata as typeof alice;
      if (value?.type === 'text-delta') break;
    }
    aborter.abort();

    // Bob's resume of the same chat id sees nothing; his own request gets a session of its own.
    expect(await transport(BOB).reconnectToStream({ chatId: 'shared-name' })).toBeNull();
    const bobRun = await fetch(`${app.url}/v1/runs/${alice.runId}`, { headers: { authorization: BOB } });
    expect(bobRun.status).toBe(404);
    upstream.enqueue(text('Bob here.'));
    const bob = await send('shared-name', [userMessage('u1', 'Hi')], transport(BOB));
    const bobMeta = (bob.chunks[0] as { messageMetadata: { sessionId: string } }).messageMetadata;
    expect(bobMeta.sessionId).not.toBe(alice.sessionId);
    expect(textOf(bob.message)).toBe('Bob here.');

    await fetch(`${app.url}/v1/runs/${alice.runId}/cancel`, {
      method: 'POST',
      headers: { authorization: ALICE },
    });
  });

  it('answers with the v1 header and [DONE], and refuses bad bodies and a busy chat before streaming', async () => {
    const post = (body: unknown, authorization = ALICE) =>
      fetch(`${app.url}/v1/ai-sdk/chat`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    upstream.enqueue(text('Fine.'));
    const ok = await post({ id: 'chat-raw', messages: [userMessage('u1', 'Hi')], trigger: 'submit-message' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    const body = await ok.text();
    expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true);

    expect(
      (await post({ id: '', messages: [userMessage('u1', 'Hi')], trigger: 'submit-message' })).status,
    ).toBe(400);
    expect(
      (await post({ id: 'x'.repeat(201), messages: [userMessage('u1', 'Hi')], trigger: 'submit-message' }))
        .status,
    ).toBe(400);
    expect((await post({ id: 'chat-raw', messages: [], trigger: 'submit-message' })).status).toBe(400);
    expect(
      (
        await post(
          { id: 'chat-raw', messages: [userMessage('u1', 'Hi')], trigger: 'submit-message' },
          'Bearer nope',
        )
      ).status,
    ).toBe(401);
    // Later requests' SessionOptions are ignored, never a 400.
    upstream.enqueue(text('Still fine.'));
    const later = await post({
      id: 'chat-raw',
      messages: [userMessage('u2', 'Again')],
      trigger: 'submit-message',
      mode: 'exec',
    });
    expect(later.status).toBe(200);
    await later.text();

    // A waiting run makes the chat busy: a new prompt is a 409 naming the run.
    upstream.enqueue(
      toolCalls([{ id: 'call_busy', name: 'write_file', arguments: { path: 'busy.txt', content: 'x' } }]),
    );
    const waiting = await send('chat-busy', [userMessage('u1', 'Write')]);
    const busy = await post({
      id: 'chat-busy',
      messages: [userMessage('u2', 'Other')],
      trigger: 'submit-message',
    });
    expect(busy.status).toBe(409);
    expect(await busy.json()).toMatchObject({ runId: waiting.message.id });
    // The reloaded page gets the pending approval again from the resume route.
    const replay = await transport().reconnectToStream({ chatId: 'chat-busy' });
    const replayed = await read(replay!);
    expect(replayed.message.parts.find((p) => p.type === 'dynamic-tool')).toMatchObject({
      state: 'approval-requested',
    });
    expect(replayed.chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool-calls' });
    await fetch(`${app.url}/v1/runs/${waiting.message.id}/cancel`, {
      method: 'POST',
      headers: { authorization: ALICE },
    });
    expect(await transport().reconnectToStream({ chatId: 'chat-busy' })).toBeNull();
  });
});
