import { DataSource } from 'typeorm';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { agentsFile, byConversation } from '../support/delegation-scripts';
import { answerOf, api, openStream, type StreamEvent } from '../support/sse-client';

const ofType = (events: StreamEvent[], type: string) =>
  events.filter((e) => e.event === type).map((e) => e.data);

describe('delegation to child runs (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      AGENTS_CONFIG: agentsFile({
        researcher: {
          description: 'Finds facts.',
          systemPrompt: 'You are the researcher.',
          tools: ['read_file'],
        },
        reviewer: { description: 'Reviews.', systemPrompt: 'You are the reviewer.', mode: 'exec' },
      }),
    });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  it('runs two delegations of one step at once and answers each call with its child final answer', async () => {
    upstream.fallback = byConversation((c) => {
      if (c.system === 'You are the researcher.') return text(`Facts about ${c.prompt}.`);
      if (c.system === 'You are the reviewer.') return text('The review is clean.');
      if (c.results.size === 0) {
        return toolCalls([
          { id: 'd1', name: 'delegate', arguments: { agent: 'researcher', task: 'owls' } },
          { id: 'd2', name: 'delegate', arguments: { agent: 'reviewer', task: 'review the owl essay' } },
        ]);
      }
      return text(`Both said: ${c.results.get('d1')} / ${c.results.get('d2')}`);
    });
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Write about owls' } });
    expect(stream.status).toBe(200);
    const events = await stream.rest(20_000);

    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    // Gap-free numbering in the parent's stream, whoever appended.
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    const started = ofType(events, 'subagent_started');
    expect(started.map((s) => [s.toolCallId, s.agent]).sort()).toEqual([
      ['d1', 'researcher'],
      ['d2', 'reviewer'],
    ]);
    const finished = ofType(events, 'subagent_finished');
    expect(finished.map((s) => [s.toolCallId, s.status]).sort()).toEqual([
      ['d1', 'completed'],
      ['d2', 'completed'],
    ]);
    const results = ofType(events, 'tool_call_result');
    expect(results.map((r) => [r.toolCallId, r.isError, r.content]).sort()).toEqual([
      ['d1', false, 'Facts about owls.'],
      ['d2', false, 'The review is clean.'],
    ]);
    // Both children had started before either ended: they ran at once.
    const kinds = events.map((e) => e.event);
    expect(kinds.lastIndexOf('subagent_started')).toBeLessThan(kinds.indexOf('subagent_finished'));

    // Each child's events are in the parent's stream, between its subagent_started and _finished,
    // with the child's runId and parentRunId; renumbered by the parent's stream (checked above).
    const parentRunId = events[0].data.runId;
    for (const s of started) {
      const own = events.filter((e) => e.data.runId === s.childRunId);
      expect(own.map((e) => e.event)).toEqual(['text', 'step_finished']);
      expect(own.every((e) => e.data.parentRunId === parentRunId)).toBe(true);
      const from = events.findIndex(
        (e) => e.event === 'subagent_started' && e.data.childRunId === s.childRunId,
      );
      const to = events.findIndex(
        (e) => e.event === 'subagent_finished' && e.data.childRunId === s.childRunId,
      );
      expect(events.indexOf(own[0])).toBeGreaterThan(from);
      expect(events.indexOf(own.at(-1)!)).toBeLessThan(to);
    }
    expect(answerOf(events.filter((e) => e.data.runId === parentRunId))).toBe(
      'Both said: Facts about owls. / The review is clean.',
    );

    // The child sessions: listed only with ?children=true, they name their parent, and take no prompt.
    const sessionId = events[0].data.sessionId;
    const listed = await api(app.url, 'GET', '/v1/sessions');
    expect(listed.body.data.map((s: any) => s.id)).toEqual([sessionId]);
    const all = await api(app.url, 'GET', '/v1/sessions?children=true');
    expect(all.body.data).toHaveLength(3);
    const child = await api(app.url, 'GET', `/v1/sessions/${started[0].childSessionId}`);
    expect(child.body).toMatchObject({ parentSessionId: sessionId, agent: started[0].agent });
    const prompt = await api(app.url, 'POST', `/v1/sessions/${started[0].childSessionId}/messages`, {
      content: 'hello',
    });
    expect(prompt.status).toBe(409);

    // Deleting the session deletes its child sessions, their runs and their events.
    expect((await api(app.url, 'DELETE', `/v1/sessions/${sessionId}`)).status).toBe(204);
    expect((await api(app.url, 'GET', `/v1/sessions/${started[0].childSessionId}`)).status).toBe(404);
    expect((await api(app.url, 'GET', `/v1/runs/${started[0].childRunId}`)).status).toBe(404);
    const left = await app.app
      .get(DataSource)
      .query('SELECT count(*)::int AS n FROM run_events WHERE run_id = ANY($1::uuid[])', [
        started.map((s) => s.childRunId),
      ]);
    expect(left[0].n).toBe(0);
  });

  it('gives a child no more than its parent: the lower mode, and only tools its parent may use', async () => {
    upstream.fallback = byConversation((c) => {
      if (c.system === 'You are the reviewer.') return text('ok');
      if (c.results.size === 0)
        return toolCalls([{ id: 'd1', name: 'delegate', arguments: { agent: 'reviewer', task: 'look' } }]);
      return text('done');
    });
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'Go', mode: 'write', tools: ['read_file', 'write_file', 'delegate'] },
    });
    const events = await stream.rest(20_000);
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    const childSessionId = ofType(events, 'subagent_started')[0].childSessionId;
    const child = await api(app.url, 'GET', `/v1/sessions/${childSessionId}`);
    // The reviewer's own mode is exec: its parent's session is write.
    expect(child.body.mode).toBe('write');
    expect([...child.body.tools].sort()).toEqual(['delegate', 'read_file', 'write_file']);
    const childRequest = upstream.requests.find(
      (r) => (r.body as any).messages[0].content === 'You are the reviewer.',
    )!;
    expect((childRequest.body as any).tools.map((t: any) => t.function.name).sort()).toEqual([
      'delegate',
      'read_file',
      'write_file',
    ]);
  });

  it("rolls a child's usage up into its parent's: done.usage and GET /v1/runs/:id are the tree's", async () => {
    const usage = (promptTokens: number, completionTokens: number) => ({
      usage: { promptTokens, completionTokens },
    });
    upstream.fallback = byConversation((c) => {
      if (c.system === 'You are the researcher.') return text('found', usage(100, 7));
      if (c.results.size === 0)
        return toolCalls(
          [{ id: 'd1', name: 'delegate', arguments: { agent: 'researcher', task: 'x' } }],
          usage(20, 3),
        );
      return text('done', usage(30, 1));
    });
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Count it' } });
    const events = await stream.rest(20_000);
    const done = events.at(-1)!.data;
    expect(done).toMatchObject({ type: 'done', status: 'completed' });
    expect(done.usage).toMatchObject({ promptTokens: 150, completionTokens: 11 });
    expect(ofType(events, 'subagent_finished')[0].usage).toMatchObject({
      promptTokens: 100,
      completionTokens: 7,
    });
    const run = await api(app.url, 'GET', `/v1/runs/${stream.headers.get('x-run-id')}`);
    expect(run.body.usage).toMatchObject({ promptTokens: 150, completionTokens: 11 });
  });
});
