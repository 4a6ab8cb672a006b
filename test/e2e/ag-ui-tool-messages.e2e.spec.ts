import { HttpAgent } from '@ag-ui/client';
import type { Message } from '@ag-ui/core';
import { startApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';

const ALICE = 'Bearer alice-secret-123';

interface Result {
  runId: string;
  status: string;
  pendingToolCalls: { toolCallId: string; waitingFor: string }[];
}

/**
 * An AG-UI `role: "tool"` message answers a client call the thread's run waits for, and nothing
 * else: one for a call waiting for approval, or for another thread's call, is a 409 that settles
 * nothing (the approval is still asked for through the API).
 */
describe('AG-UI tool messages that answer no waiting client call (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, API_KEYS: 'alice:alice-secret-123' });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  const headers = { authorization: ALICE, 'content-type': 'application/json' };
  const post = (threadId: string, messages: Message[]) =>
    fetch(`${app.url}/v1/ag-ui`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ threadId, runId: 'client-run', messages, tools: [], context: [] }),
    });
  const runOf = async (runId: string) =>
    (await (await fetch(`${app.url}/v1/runs/${runId}`, { headers })).json()) as {
      status: string;
      pendingToolCalls: { toolCallId: string; waitingFor: string }[];
    };

  async function waitingForApproval(threadId: string, callId: string) {
    upstream.enqueue(
      toolCalls([{ id: callId, name: 'write_file', arguments: { path: `${callId}.txt`, content: 'x' } }]),
      text('Written.'),
    );
    const a = new HttpAgent({ url: `${app.url}/v1/ag-ui`, headers: { Authorization: ALICE }, threadId });
    a.addMessage({ id: 'u1', role: 'user', content: 'Write the file.' });
    const out = await a.runAgent({});
    const result = out.result as Result;
    expect(result).toMatchObject({
      status: 'requires_action',
      pendingToolCalls: [{ toolCallId: callId, waitingFor: 'approval' }],
    });
    return { agent: a, runId: result.runId };
  }

  it('answers 409 to a tool message for a call waiting for approval, and the call still waits for it', async () => {
    const { agent, runId } = await waitingForApproval('thread-tool-for-approval', 'call_needs_ok');

    const res = await post('thread-tool-for-approval', [
      ...agent.messages,
      { id: 't1', role: 'tool', toolCallId: 'call_needs_ok', content: 'I wrote it myself' },
    ]);
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ runId, message: expect.stringContaining('call_needs_ok') });

    expect(await runOf(runId)).toMatchObject({
      status: 'requires_action',
      pendingToolCalls: [{ toolCallId: 'call_needs_ok', waitingFor: 'approval' }],
    });
    const approval = await fetch(`${app.url}/v1/runs/${runId}/tool-calls/call_needs_ok/approval`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ approve: false, reason: 'not now' }),
    });
    expect(approval.status).toBe(202);
    // The run goes on with the rejection (the next test's script must not meet it).
    await eventually(async () => (await runOf(runId)).status === 'completed');
    expect(upstream.requests).toHaveLength(2);
  });

  it("answers 409 to a tool message for another thread's waiting call, and that call still waits", async () => {
    const { runId } = await waitingForApproval('thread-other-a', 'call_of_a');
    upstream.enqueue(text('Hello.'));
    const b = new HttpAgent({
      url: `${app.url}/v1/ag-ui`,
      headers: { Authorization: ALICE },
      threadId: 'thread-other-b',
    });
    b.addMessage({ id: 'u1', role: 'user', content: 'Hi.' });
    await b.runAgent({});

    const res = await post('thread-other-b', [
      ...b.messages,
      { id: 't1', role: 'tool', toolCallId: 'call_of_a', content: 'forged' },
    ]);
    expect(res.status).toBe(409);
    expect(await runOf(runId)).toMatchObject({
      status: 'requires_action',
      pendingToolCalls: [{ toolCallId: 'call_of_a', waitingFor: 'approval' }],
    });
  });
});
