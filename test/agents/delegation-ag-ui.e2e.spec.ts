import { HttpAgent } from '@ag-ui/client';
import { EventType, type BaseEvent } from '@ag-ui/core';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { agentsFile, byConversation, delegateOnce } from '../support/delegation-scripts';

const ASKER = 'You ask the browser.';

interface Result {
  runId: string;
  status: string;
  pendingToolCalls: { toolCallId: string; waitingFor: string }[];
}

/**
 * A child run given a client tool of the root session (an AG-UI thread's `tools`) asks the thread's
 * client for it: the call is one of the thread's tool calls, and the thread's tool message answers it.
 */
describe('delegation through AG-UI (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      AGENTS_CONFIG: agentsFile({ asker: { description: 'Asks the browser.', systemPrompt: ASKER } }),
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it("hands a child's client-tool call to the thread and goes on with its tool message", async () => {
    upstream.fallback = byConversation((c) => {
      if (c.system === ASKER) {
        if (c.results.size === 0) return toolCalls([{ id: 'bt1', name: 'get_browser_time', arguments: {} }]);
        return text(`The browser says ${c.results.get('bt1')}.`);
      }
      return delegateOnce(c, 'Root', { callId: 'r1', agent: 'asker', task: 'ask the time' });
    });
    const tools = [
      {
        name: 'get_browser_time',
        description: 'The time in the browser.',
        parameters: { type: 'object', properties: {} },
      },
    ];
    const agent = new HttpAgent({ url: `${app.url}/v1/ag-ui`, threadId: 'thread-child-client-tool' });
    agent.addMessage({ id: 'u1', role: 'user', content: 'What time is it?' });
    const seen: BaseEvent[] = [];
    const first = await agent.runAgent({ tools }, { onEvent: ({ event }) => void seen.push(event) });
    expect(first.result as Result).toMatchObject({
      status: 'requires_action',
      pendingToolCalls: [{ toolCallId: 'bt1', waitingFor: 'result' }],
    });
    expect(seen).toContainEqual(
      expect.objectContaining({
        type: EventType.TOOL_CALL_START,
        toolCallId: 'bt1',
        toolCallName: 'get_browser_time',
      }),
    );

    agent.addMessage({ id: 't1', role: 'tool', toolCallId: 'bt1', content: '12:00' });
    const second = await agent.runAgent({ tools });
    expect(second.result as Result).toMatchObject({ status: 'completed', pendingToolCalls: [] });
    const answer = agent.messages.at(-1);
    expect(answer).toMatchObject({ role: 'assistant', content: 'Root: The browser says 12:00.' });
  });
});
