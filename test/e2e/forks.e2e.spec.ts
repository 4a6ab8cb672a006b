import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { api, openStream } from '../support/sse-client';

const ALICE = { authorization: 'Bearer alice-secret-123' };
const BOB = { authorization: 'Bearer bob-secret-456' };

interface Message {
  id: string;
  role: string;
  content: string | null;
  toolCalls?: unknown[];
  toolCallId?: string;
  kind?: string;
  context?: string;
  summarizes?: { fromId: string; toId: string };
  runId?: string;
}

describe('POST /v1/sessions/:id/fork (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      API_KEYS: 'alice:alice-secret-123,bob:bob-secret-456',
    });
    writeFileSync(join(app.workspace, 'README.md'), '# Demo\n');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });
  afterEach(() => upstream.reset());

  const call = (method: string, path: string, body?: unknown, who = ALICE) =>
    api(app.url, method, path, body, who);
  const messages = async (sessionId: string): Promise<Message[]> =>
    (await call('GET', `/v1/sessions/${sessionId}`)).body.messages;
  const shape = (m: Message) => [m.role, m.content, m.toolCallId ?? null];

  /** A prompt answered to its end in `sessionId` (or a new session); the run's session id. */
  async function answered(prompt: string, sessionId?: string, options: Record<string, unknown> = {}) {
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { prompt, ...(sessionId ? { sessionId } : options) },
      headers: ALICE,
    });
    expect(stream.status).toBe(200);
    const events = await stream.rest();
    expect(events.at(-1)!.event).toBe('done');
    return events[0].data.sessionId as string;
  }

  /** A session: a prompt answered after two reads (one step, two calls), then a second prompt. */
  async function sessionWithToolCalls(options: Record<string, unknown> = {}): Promise<string> {
    upstream.enqueue(
      toolCalls([
        { name: 'read_file', arguments: { path: 'README.md' } },
        { name: 'list_files', arguments: { path: '.' } },
      ]),
      text('Read both.'),
      text('Second answer.'),
    );
    const id = await answered('First prompt.', undefined, options);
    await answered('Second prompt.', id);
    return id;
  }

  it('forks at a message with the same options and title; never inside a tool-call group', async () => {
    const sourceId = await sessionWithToolCalls({ title: 'Source', mode: 'write', maxIterations: 7 });
    const source = await messages(sourceId);
    expect(source.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
      'user',
      'assistant',
    ]);
    const fork = (atMessageId?: unknown, who = ALICE) =>
      call('POST', `/v1/sessions/${sourceId}/fork`, atMessageId === undefined ? {} : { atMessageId }, who);

    // Inside the group: the assistant message that asked, and its first answer.
    for (const inside of [source[2], source[3]]) {
      const refused = await fork(inside.id);
      expect(refused.status).toBe(400);
      expect(refused.body.message).toContain('atMessageId');
    }
    for (const notOne of [randomUUID(), 'not-a-uuid', 42]) {
      const refused = await fork(notOne);
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.body.message)).toContain('atMessageId');
    }
    expect((await fork(source[4].id, BOB)).status).toBe(404);
    expect((await call('POST', `/v1/sessions/${randomUUID()}/fork`, {})).status).toBe(404);

    const atGroupEnd = await fork(source[4].id);
    expect(atGroupEnd.status).toBe(201);
    expect(atGroupEnd.body).toMatchObject({ title: 'Source', mode: 'write', maxIterations: 7 });
    expect(atGroupEnd.body.id).not.toBe(sourceId);
    const forked = await messages(atGroupEnd.body.id);
    expect(forked.map(shape)).toEqual(source.slice(0, 5).map(shape));
    expect(forked.map((m) => m.id).filter((id) => source.some((s) => s.id === id))).toEqual([]);

    // No body: everything stored.
    const whole = await call('POST', `/v1/sessions/${sourceId}/fork`);
    expect(whole.status).toBe(201);
    expect((await messages(whole.body.id)).map(shape)).toEqual(source.map(shape));
    // The fork is the caller's, listed with its sessions; another key does not see it.
    expect((await call('GET', `/v1/sessions/${whole.body.id}`, undefined, BOB)).status).toBe(404);
    // Nor may it replay the caller's runs.
    const runId = source.find((m) => m.runId !== undefined)!.runId!;
    expect((await call('POST', `/v1/runs/${runId}/replay`, {}, BOB)).status).toBe(404);
  });

  it('is independent of its source both ways, also once the source is deleted', async () => {
    const sourceId = await sessionWithToolCalls();
    const before = await messages(sourceId);
    const fork = await call('POST', `/v1/sessions/${sourceId}/fork`, { atMessageId: before[5].id });
    expect(fork.status).toBe(201);
    const forkId = fork.body.id as string;

    upstream.enqueue(text('In the fork.'));
    await answered('Fork prompt.', forkId);
    expect(await messages(sourceId)).toEqual(before);
    // What the model got in the fork: the source's conversation up to the cut, then the new prompt.
    const sent = upstream.requests.at(-1)!.body.messages as { role: string; content: unknown }[];
    expect(sent.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
      'user',
    ]);
    expect(sent.at(-1)!.content).toBe('Fork prompt.');

    const forkBefore = await messages(forkId);
    upstream.enqueue(text('In the source.'));
    await answered('Source prompt.', sourceId);
    expect(await messages(forkId)).toEqual(forkBefore);

    expect((await call('DELETE', `/v1/sessions/${sourceId}`)).status).toBe(204);
    expect(await messages(forkId)).toEqual(forkBefore);
    upstream.enqueue(text('Still here.'));
    await answered('After the delete.', forkId);
    expect((await messages(forkId)).at(-1)!.content).toBe('Still here.');
  });

  it('forks a source with an active run: what is stored, without the step whose calls wait', async () => {
    upstream.enqueue(
      text('Noted.'),
      toolCalls([
        { name: 'read_file', arguments: { path: 'README.md' } },
        { name: 'write_file', arguments: { path: 'x.txt', content: 'x' } },
      ]),
    );
    const sourceId = await answered('Remember this.');
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'Now write.', sessionId: sourceId },
      headers: ALICE,
    });
    await stream.until('tool_approval_required');
    const source = await messages(sourceId);
    // The step waits for the write's approval (its read runs once it is decided): no result yet.
    expect(source.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant']);

    const fork = await call('POST', `/v1/sessions/${sourceId}/fork`);
    expect(fork.status).toBe(201);
    expect((await messages(fork.body.id)).map(shape)).toEqual(source.slice(0, 4).map(shape));
    expect((await call('POST', `/v1/sessions/${sourceId}/fork`, { atMessageId: source[4].id })).status).toBe(
      400,
    );
    stream.close();
  });

  it('keeps a summary meaningful: one the cut keeps names the copies; one it leaves out gives the messages back whole', async () => {
    const sourceId = await sessionWithToolCalls();
    upstream.enqueue(text('A summary of it all.'));
    const compacted = await call('POST', `/v1/sessions/${sourceId}/compact`);
    expect(compacted.status).toBe(200);
    const source = await messages(sourceId);
    const summary = source.find((m) => m.kind === 'summary')!;
    expect(summary).toBeDefined();
    const summarized = source.filter((m) => m.context === 'summarized');
    expect(summarized.length).toBeGreaterThan(0);

    const whole = await call('POST', `/v1/sessions/${sourceId}/fork`);
    const copied = await messages(whole.body.id);
    const copiedSummary = copied.find((m) => m.kind === 'summary')!;
    const ids = copied.map((m) => m.id);
    expect(copiedSummary.content).toBe(summary.content);
    expect(ids).toContain(copiedSummary.summarizes!.fromId);
    expect(ids).toContain(copiedSummary.summarizes!.toId);
    expect(copied.filter((m) => m.context === 'summarized').length).toBe(summarized.length);

    // Cut inside the summarized span: the summary is left out, and nothing stays marked summarized.
    const inside = summarized.find((m) => m.role === 'user')!;
    const early = await call('POST', `/v1/sessions/${sourceId}/fork`, { atMessageId: inside.id });
    expect(early.status).toBe(201);
    const earlyMessages = await messages(early.body.id);
    expect(earlyMessages.some((m) => m.kind === 'summary' || m.context === 'summarized')).toBe(false);

    // A fork goes on and compacts like any session, and its source does not see it.
    const sourceNow = await messages(sourceId);
    upstream.enqueue(text('An answer in the fork.'));
    await answered('A prompt in the fork.', whole.body.id);
    upstream.enqueue(text('A summary of the fork.'));
    const forkCompacted = await call('POST', `/v1/sessions/${whole.body.id}/compact`);
    expect(forkCompacted.status).toBe(200);
    expect((await messages(whole.body.id)).filter((m) => m.kind === 'summary')).toHaveLength(2);
    expect(await messages(sourceId)).toEqual(sourceNow);
  });
});
