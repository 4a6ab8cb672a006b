import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { agentsFile, byConversation, delegateOnce } from '../support/delegation-scripts';
import { eventually } from '../support/eventually';
import { answerOf, api, openStream } from '../support/sse-client';

const PLANNER = 'You are the planner.';
const WRITER = 'You are the writer.';

/** root → planner → writer; the writer asks to write a file, which needs approval in safe mode. */
function treeScript(upstream: FakeUpstream): void {
  upstream.fallback = byConversation((c) => {
    if (c.system === WRITER) {
      if (c.results.size === 0)
        return toolCalls([
          { id: 'w1', name: 'write_file', arguments: { path: 'notes.txt', content: 'owls' } },
        ]);
      return text(c.results.get('w1')?.startsWith('Created') ? 'Writer: done' : 'Writer: failed');
    }
    if (c.system === PLANNER) {
      return delegateOnce(c, 'Planner', { callId: 'p1', agent: 'writer', task: 'write notes' });
    }
    return delegateOnce(c, 'Root', { callId: 'r1', agent: 'planner', task: 'plan notes' });
  });
}

describe('a tree of delegations (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      AGENTS_CONFIG: agentsFile({
        planner: { description: 'Plans.', systemPrompt: PLANNER, mode: 'write' },
        writer: { description: 'Writes.', systemPrompt: WRITER, mode: 'write' },
      }),
    });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  it("decides a grandchild's approval at the root's run id, and the whole chain goes on", async () => {
    treeScript(upstream);
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Take notes' } });
    expect(stream.status).toBe(200);
    const rootId = stream.headers.get('x-run-id')!;

    let pending: any[] = [];
    await eventually(async () => {
      pending = (await api(app.url, 'GET', `/v1/runs/${rootId}`)).body.pendingToolCalls;
      return pending.length > 0;
    });
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ toolCallId: 'w1', name: 'write_file', waitingFor: 'approval' });
    const writerRunId = pending[0].runId;
    expect(writerRunId).not.toBe(rootId);
    // Every run from the grandchild up to the root waits.
    const writerRun = (await api(app.url, 'GET', `/v1/runs/${writerRunId}`)).body;
    expect(writerRun.status).toBe('requires_action');
    expect((await api(app.url, 'GET', `/v1/runs/${rootId}`)).body.status).toBe('requires_action');
    // The writer sits at the last level (AGENT_MAX_DEPTH 2): it is not offered delegate.
    const writerRequest = upstream.requests.find((r) => (r.body as any).messages[0].content === WRITER)!;
    expect((writerRequest.body as any).tools.map((t: any) => t.function.name)).not.toContain('delegate');
    const plannerRequest = upstream.requests.find((r) => (r.body as any).messages[0].content === PLANNER)!;
    expect((plannerRequest.body as any).tools.map((t: any) => t.function.name)).toContain('delegate');

    const approval = await api(app.url, 'POST', `/v1/runs/${rootId}/tool-calls/w1/approval`, {
      approve: true,
    });
    expect(approval.status).toBe(202);

    const events = await stream.rest(20_000);
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(answerOf(events.filter((e) => e.data.runId === rootId))).toBe('Root: Planner: Writer: done');
    // The grandchild's approval request reached the root's stream, under the grandchild's run id.
    const asked = events.find((e) => e.event === 'tool_approval_required')!;
    expect(asked.data).toMatchObject({ runId: writerRunId, toolCallId: 'w1' });
    expect(asked.data.parentRunId).not.toBe(rootId);
    // The planner's delegation to the writer is announced in the root's stream too, before the writer's events.
    const nested = events.find((e) => e.event === 'subagent_started' && e.data.childRunId === writerRunId)!;
    expect(nested.data).toMatchObject({
      runId: asked.data.parentRunId,
      parentRunId: rootId,
      agent: 'writer',
    });
    expect(events.indexOf(nested)).toBeLessThan(events.indexOf(asked));
    expect(readFileSync(join(app.workspace, 'notes.txt'), 'utf8')).toBe('owls');
    expect((await api(app.url, 'GET', `/v1/runs/${writerRunId}`)).body.status).toBe('completed');
    // Decided once: a second approval is a 409.
    const again = await api(app.url, 'POST', `/v1/runs/${rootId}/tool-calls/w1/approval`, { approve: true });
    expect(again.status).toBe(409);
  });

  it('cancelling the root cancels every run below it', async () => {
    treeScript(upstream);
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Take more notes' } });
    const rootId = stream.headers.get('x-run-id')!;
    let pending: any[] = [];
    await eventually(async () => {
      pending = (await api(app.url, 'GET', `/v1/runs/${rootId}`)).body.pendingToolCalls;
      return pending.length > 0;
    });
    const writerRunId = pending[0].runId;
    expect((await api(app.url, 'POST', `/v1/runs/${rootId}/cancel`)).status).toBe(202);
    const events = await stream.rest(20_000);
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'cancelled' });
    await eventually(
      async () => (await api(app.url, 'GET', `/v1/runs/${writerRunId}`)).body.status === 'cancelled',
    );
    const sessions = (await api(app.url, 'GET', '/v1/sessions?children=true')).body.data;
    for (const s of sessions) {
      const detail = (await api(app.url, 'GET', `/v1/sessions/${s.id}`)).body;
      expect(detail.activeRunId ?? null).toBeNull();
    }
  });
});
