import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { agentsFile, byConversation } from '../support/delegation-scripts';
import { api, openStream } from '../support/sse-client';

describe('forking a child session (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      AGENTS_CONFIG: agentsFile({
        researcher: { description: 'Finds facts.', systemPrompt: 'You are the researcher.', mode: 'safe' },
      }),
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  /** A client's run that delegated once and ended; its child session and child run. */
  async function delegated(): Promise<{
    parentSessionId: string;
    childSessionId: string;
    childRunId: string;
  }> {
    upstream.fallback = byConversation((c) => {
      if (c.system === 'You are the researcher.') {
        return c.prompt === 'owls' ? text('Owls hunt at night.') : text(`More on: ${c.prompt}`);
      }
      if (c.results.size === 0) {
        return toolCalls([{ id: 'd1', name: 'delegate', arguments: { agent: 'researcher', task: 'owls' } }]);
      }
      return text('Done.');
    });
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Write about owls' } });
    expect(stream.status).toBe(200);
    const events = await stream.rest(20_000);
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    const started = events.find((e) => e.event === 'subagent_started')!.data;
    return {
      parentSessionId: events[0].data.sessionId,
      childSessionId: started.childSessionId,
      childRunId: started.childRunId,
    };
  }

  it("is a new top-level session with the child's settings and history, which takes prompts", async () => {
    const { parentSessionId, childSessionId } = await delegated();
    const child = (await api(app.url, 'GET', `/v1/sessions/${childSessionId}`)).body;

    const forked = await api(app.url, 'POST', `/v1/sessions/${childSessionId}/fork`, {});
    expect(forked.status).toBe(201);
    expect(forked.body).toMatchObject({ parentSessionId: null, agent: 'researcher', mode: child.mode });
    expect(forked.body.id).not.toBe(childSessionId);

    const fork = (await api(app.url, 'GET', `/v1/sessions/${forked.body.id}`)).body;
    const shape = (m: { role: string; content: string | null }) => [m.role, m.content];
    expect(fork.messages.map(shape)).toEqual(child.messages.map(shape));
    expect(fork.messages.map(shape)).toEqual([
      ['system', 'You are the researcher.'],
      ['user', 'owls'],
      ['assistant', 'Owls hunt at night.'],
    ]);

    // A client's session: listed without ?children=true, and it takes a prompt (a child's is a 409).
    const listed = await api(app.url, 'GET', '/v1/sessions');
    expect(listed.body.data.map((s: { id: string }) => s.id)).toEqual(
      expect.arrayContaining([forked.body.id, parentSessionId]),
    );
    expect(listed.body.data.map((s: { id: string }) => s.id)).not.toContain(childSessionId);
    const next = await openStream(`${app.url}/v1/sessions/${forked.body.id}/messages`, {
      body: { content: 'And bats?' },
    });
    expect(next.status).toBe(200);
    const events = await next.rest(20_000);
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });

    // The child session itself is as it was.
    const after = (await api(app.url, 'GET', `/v1/sessions/${childSessionId}`)).body;
    expect(after.messages.map(shape)).toEqual(child.messages.map(shape));
    expect(after.parentSessionId).toBe(parentSessionId);
  });

  it('replays a child run in a top-level fork of its session', async () => {
    const { childRunId } = await delegated();
    const replay = await api(app.url, 'POST', `/v1/runs/${childRunId}/replay`, {});
    expect(replay.status).toBe(201);
    const session = (await api(app.url, 'GET', `/v1/sessions/${replay.body.sessionId}`)).body;
    expect(session.parentSessionId).toBeNull();
  });
});
