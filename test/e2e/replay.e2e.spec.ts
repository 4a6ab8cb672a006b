import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { anthropicText, FakeAnthropic } from '../support/fake-anthropic';
import { FakeUpstream, status, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { answerOf, api, openStream, type StreamEvent } from '../support/sse-client';

const CLIENT_TOOL = {
  type: 'function',
  function: {
    name: 'ask_user',
    description: 'Ask the person a question',
    parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
  },
};

/** Every field of an event but the ones a replay may change: its number and the ids of its run, session and message. */
const OWN = new Set(['runId', 'sessionId', 'messageId', 'seq']);

/**
 * The events as a replay must reproduce them: in order, `text` runs joined (their deltas may be cut
 * differently), every field but the run's, session's and message's ids.
 */
function comparable(events: readonly StreamEvent[]): { event: string; data: Record<string, unknown> }[] {
  const out: { event: string; data: Record<string, unknown> }[] = [];
  for (const e of events) {
    const data = Object.fromEntries(Object.entries(e.data).filter(([k]) => !OWN.has(k)));
    const last = out.at(-1);
    if (e.event === 'text' && last?.event === 'text')
      last.data.delta = `${String(last.data.delta)}${String(data.delta)}`;
    else out.push({ event: e.event, data });
  }
  return out;
}

/** Every event of a run, from its first to its end. */
async function allEvents(app: TestApp, runId: string): Promise<StreamEvent[]> {
  const stream = await openStream(`${app.url}/v1/runs/${runId}/events`);
  expect(stream.status).toBe(200);
  return stream.rest();
}

describe('POST /v1/runs/:id/replay (e2e)', () => {
  let openai: FakeUpstream;
  let anthropic: FakeAnthropic;
  let app: TestApp;

  beforeAll(async () => {
    openai = await FakeUpstream.start();
    anthropic = await FakeAnthropic.start();
    app = await startApp({
      OPENAI_BASE_URL: openai.baseUrl,
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: anthropic.baseUrl,
      LLM_MAX_RETRIES: '0',
    });
    writeFileSync(join(app.workspace, 'README.md'), '# Demo\nHello from the workspace.\n');
  });
  afterAll(async () => {
    await app?.close();
    await openai?.close();
    await anthropic?.close();
  });
  afterEach(() => {
    openai.reset();
    anthropic.reset();
  });

  it('replays a run with reads, a failed read, an approved write and a client tool from the record alone', async () => {
    openai.enqueue(
      toolCalls([
        { name: 'read_file', arguments: { path: 'README.md' } },
        { name: 'read_file', arguments: { path: 'missing.txt' } },
      ]),
      toolCalls([{ name: 'write_file', arguments: { path: 'notes.txt', content: 'hi\n' } }]),
      toolCalls([{ name: 'ask_user', arguments: { question: 'Colour?' } }], { text: 'One question.' }),
      text('Done: blue.'),
    );
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'Read, write, ask.', clientTools: [CLIENT_TOOL] },
    });
    const first = await stream.until('tool_approval_required');
    const runId = first[0].data.runId as string;
    const approval = first.at(-1)!.data;
    const approve = `/v1/runs/${runId}/tool-calls/${approval.toolCallId}/approval`;
    expect((await api(app.url, 'POST', approve, { approve: true })).status).toBe(202);
    const second = await stream.until((e) => e.event === 'tool_call_start' && e.data.executor === 'client');
    const client = second.at(-1)!.data;
    const result = `/v1/runs/${runId}/tool-calls/${client.toolCallId}/result`;
    expect((await api(app.url, 'POST', result, { content: 'blue' })).status).toBe(202);
    await stream.rest();
    const original = await allEvents(app, runId);
    expect(original.at(-1)!.data).toMatchObject({ status: 'completed', iterations: 4 });
    expect(original.some((e) => e.event === 'tool_call_result' && e.data.isError === true)).toBe(true);
    const requestsBefore = openai.requests.length;
    expect(requestsBefore).toBe(4);
    // Whoever changes the file after the run: a replay that wrote it again would undo this.
    const notes = join(app.workspace, 'notes.txt');
    expect(readFileSync(notes, 'utf8')).toBe('hi\n');
    writeFileSync(notes, 'changed since\n');
    const spent = async () => {
      const usage = await api(app.url, 'GET', '/v1/usage');
      return usage.body.data.reduce(
        (sum: number, row: { promptTokens: number; completionTokens: number }) =>
          sum + row.promptTokens + row.completionTokens,
        0,
      ) as number;
    };
    const spentBefore = await spent();
    expect(spentBefore).toBeGreaterThan(0);

    const replay = await api(app.url, 'POST', `/v1/runs/${runId}/replay`, {});
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual({ runId: expect.any(String), sessionId: expect.any(String) });
    const replayed = await allEvents(app, replay.body.runId);

    expect(comparable(replayed)).toEqual(
      comparable(original.filter((e) => e.event !== 'tool_approval_required')),
    );
    expect(openai.requests.length).toBe(requestsBefore);
    expect(readFileSync(notes, 'utf8')).toBe('changed since\n');

    // A run like any other, in a fork of its own: the source session is as it was.
    const run = await api(app.url, 'GET', `/v1/runs/${replay.body.runId}`);
    expect(run.body).toMatchObject({ status: 'completed', iterations: 4, sessionId: replay.body.sessionId });
    expect(run.body.usage).toEqual((await api(app.url, 'GET', `/v1/runs/${runId}`)).body.usage);
    // Its events show the original's usage, but a replay from the record spends no token.
    expect(await spent()).toBe(spentBefore);
    const sourceId = original[0].data.sessionId as string;
    expect(replay.body.sessionId).not.toBe(sourceId);
    const [source, fork] = await Promise.all([
      api(app.url, 'GET', `/v1/sessions/${sourceId}`),
      api(app.url, 'GET', `/v1/sessions/${replay.body.sessionId}`),
    ]);
    const shape = (m: Record<string, unknown>) => [m.role, m.content, m.toolCallId ?? null];
    expect(fork.body.messages.map(shape)).toEqual(source.body.messages.map(shape));
    expect(fork.body.clientTools).toEqual([CLIENT_TOOL]);
  });

  it('replays a run that failed on the model: the recorded steps, then the same failure, without a request', async () => {
    openai.enqueue(
      toolCalls([{ name: 'read_file', arguments: { path: 'README.md' } }]),
      status(400, { error: { message: 'model "nope" does not exist', type: 'invalid_request_error' } }),
    );
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Read, then fail.' } });
    const runId = (await stream.rest())[0].data.runId as string;
    const original = await allEvents(app, runId);
    expect((await api(app.url, 'GET', `/v1/runs/${runId}`)).body.status).toBe('failed');
    expect(openai.requests).toHaveLength(2);

    const replay = await api(app.url, 'POST', `/v1/runs/${runId}/replay`);
    expect(replay.status).toBe(201);
    const replayed = await allEvents(app, replay.body.runId);

    expect(comparable(replayed)).toEqual(comparable(original));
    expect(openai.requests).toHaveLength(2);
    const [run, originalRun] = await Promise.all([
      api(app.url, 'GET', `/v1/runs/${replay.body.runId}`),
      api(app.url, 'GET', `/v1/runs/${runId}`),
    ]);
    expect(run.body.status).toBe('failed');
    expect(run.body.error).toEqual(originalRun.body.error);
  });

  it('replays a run cancelled while a write waited: the same events, ending cancelled, without a request', async () => {
    openai.enqueue(
      toolCalls([
        { name: 'read_file', arguments: { path: 'README.md' } },
        { name: 'write_file', arguments: { path: 'never.txt', content: 'x' } },
      ]),
    );
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Read, then write.' } });
    const runId = (await stream.until('tool_approval_required'))[0].data.runId as string;
    expect((await api(app.url, 'POST', `/v1/runs/${runId}/cancel`)).status).toBe(202);
    await stream.rest();
    const original = await allEvents(app, runId);
    expect(original.at(-1)!.data).toMatchObject({ type: 'done', status: 'cancelled' });

    const replay = await api(app.url, 'POST', `/v1/runs/${runId}/replay`);
    expect(replay.status).toBe(201);
    const replayed = await allEvents(app, replay.body.runId);

    expect(comparable(replayed)).toEqual(
      comparable(original.filter((e) => e.event !== 'tool_approval_required')),
    );
    expect(openai.requests).toHaveLength(1);
  });

  it('replays from step 2 on another provider: the model is called only from step 3', async () => {
    writeFileSync(join(app.workspace, 'a.txt'), 'alpha\n');
    writeFileSync(join(app.workspace, 'b.txt'), 'beta\n');
    openai.enqueue(
      toolCalls([{ name: 'read_file', arguments: { path: 'a.txt' } }]),
      toolCalls([{ name: 'read_file', arguments: { path: 'b.txt' } }]),
      text('Both read.'),
    );
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Read a then b.' } });
    const original = await stream.rest();
    const runId = original[0].data.runId as string;
    expect(original.at(-1)!.data).toMatchObject({ status: 'completed', iterations: 3 });
    expect(openai.requests).toHaveLength(3);

    anthropic.enqueue(anthropicText('Read on Claude.'));
    const replay = await api(app.url, 'POST', `/v1/runs/${runId}/replay`, {
      fromStep: 2,
      model: 'anthropic/claude-test',
    });
    expect(replay.status).toBe(201);
    const replayed = await allEvents(app, replay.body.runId);

    expect(openai.requests).toHaveLength(3);
    expect(anthropic.requests).toHaveLength(1);
    expect(anthropic.refusals).toEqual([]);
    const steps = replayed.filter((e) => e.event === 'step_finished').map((e) => e.data.model);
    expect(steps).toEqual(['openai/gpt-4.1-mini', 'openai/gpt-4.1-mini', 'anthropic/claude-test']);
    expect(answerOf(replayed)).toBe('Read on Claude.');
    expect(replayed.at(-1)!.data).toMatchObject({ status: 'completed', iterations: 3 });
    // Claude got the recorded steps' results as the conversation.
    expect(JSON.stringify(anthropic.requests[0].body.messages)).toContain('beta');
  });

  it('refuses what cannot be replayed: model without fromStep, a step past the run, an active run, a run that is not there', async () => {
    openai.enqueue(
      toolCalls([{ name: 'write_file', arguments: { path: 'w.txt', content: 'x' } }]),
      text('ok'),
    );
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Write.' } });
    const events = await stream.until('tool_approval_required');
    const runId = events[0].data.runId as string;
    const replay = (body: unknown) => api(app.url, 'POST', `/v1/runs/${runId}/replay`, body);

    expect((await replay({ model: 'openai/gpt-4.1-mini' })).status).toBe(400);
    const active = await replay({});
    expect(active.status).toBe(409);
    expect(active.body.runId).toBe(runId);
    const missing = await api(app.url, 'POST', `/v1/runs/${crypto.randomUUID()}/replay`, {});
    expect(missing.status).toBe(404);

    const callId = events.at(-1)!.data.toolCallId as string;
    await api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/${callId}/approval`, { approve: false });
    await stream.rest();
    const tooFar = await replay({ fromStep: 3 });
    expect(tooFar.status).toBe(400);
    expect(tooFar.body.message).toContain('fromStep');
    expect((await replay({ fromStep: 1, model: 'nowhere/model' })).status).toBe(400);
    expect(openai.requests).toHaveLength(2);
  });
});
