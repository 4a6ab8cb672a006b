import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeUpstream, chunksThen, text, toolCalls } from '../support/fake-upstream';
import { createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { spawnServer, type ServerProcess } from '../support/server-process';
import { answerOf, api, eventKinds, openStream, type StreamEvent } from '../support/sse-client';

/** Real server processes (`node dist/main.js`) sharing one PostgreSQL: replicas, crashes, restarts. */
describe('runs across server processes (e2e)', () => {
  let upstream: FakeUpstream;
  let env: Record<string, string>;
  let workspace: string;
  const servers: ServerProcess[] = [];

  const start = async (extra: Record<string, string> = {}) => {
    const server = await spawnServer({ ...env, ...extra });
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    workspace = mkdtempSync(join(tmpdir(), 'loopwright-proc-'));
    env = {
      DATABASE_URL: await createTestDatabase(),
      OPENAI_BASE_URL: upstream.baseUrl,
      WORKSPACE_ROOT: workspace,
      RUN_LEASE_MS: '2000',
    };
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.kill('SIGKILL')));
    upstream.reset();
  });
  afterAll(async () => {
    await upstream.close();
  });

  it('continues a run on the process that receives the approval, and the first stream sees it end', async () => {
    const a = await start();
    const b = await start();
    upstream.enqueue(
      toolCalls([{ name: 'write_file', arguments: { path: 'replica.txt', content: 'from b\n' } }]),
      text('Done on b.'),
    );
    const stream = await openStream(`${a.url}/v1/chat`, { body: { prompt: 'Write it.' } });
    const seen = await stream.until('tool_approval_required');
    const { runId, toolCallId } = seen.at(-1)!.data;

    const approved = await api(b.url, 'POST', `/v1/runs/${runId}/tool-calls/${toolCallId}/approval`, {
      approve: true,
    });
    expect(approved.status).toBe(202);
    const rest = await stream.rest();
    expect(rest.map((e) => e.event)).toEqual(
      expect.arrayContaining(['tool_call_result', 'text', 'step_finished', 'done']),
    );
    expect(rest.at(-1)!.data.status).toBe('completed');
    const ids = [...seen, ...rest].map((e) => e.id);
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    expect(readFileSync(join(workspace, 'replica.txt'), 'utf8')).toBe('from b\n');
    expect((await api(a.url, 'GET', `/v1/runs/${runId}`)).body.status).toBe('completed');
  });

  it('survives SIGKILL while a run waits for approval: restarted, approved, finished, nothing lost', async () => {
    const first = await start();
    upstream.enqueue(
      toolCalls([{ name: 'write_file', arguments: { path: 'after-crash.txt', content: 'ok\n' } }]),
      text('Written after the crash.'),
    );
    const stream = await openStream(`${first.url}/v1/chat`, { body: { prompt: 'Write after a crash.' } });
    const seen = await stream.until('tool_approval_required');
    const { runId, toolCallId } = seen.at(-1)!.data;
    const sessionId = seen[0].data.sessionId;
    await first.kill('SIGKILL');

    const second = await start();
    expect((await api(second.url, 'GET', `/v1/runs/${runId}`)).body.status).toBe('requires_action');
    const follower = await openStream(`${second.url}/v1/runs/${runId}/events`, {
      headers: { 'Last-Event-ID': String(seen.at(-1)!.id) },
    });
    expect(
      (
        await api(second.url, 'POST', `/v1/runs/${runId}/tool-calls/${toolCallId}/approval`, {
          approve: true,
        })
      ).status,
    ).toBe(202);
    const rest = await follower.rest();
    expect(rest[0].id).toBe(seen.at(-1)!.id + 1);
    expect(rest.at(-1)!.data.status).toBe('completed');

    const session = await api(second.url, 'GET', `/v1/sessions/${sessionId}`);
    expect(session.body.messages.map((m: any) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(session.body.messages.at(-1).content).toBe('Written after the crash.');
    expect(readFileSync(join(workspace, 'after-crash.txt'), 'utf8')).toBe('ok\n');
  });

  it('with RUN_MAX_RESUMES=0, ends a run whose process died mid-answer as failed, keeping the text it had stored', async () => {
    const noTakeOver = { RUN_MAX_RESUMES: '0' };
    const first = await start(noTakeOver);
    upstream.enqueue(chunksThen(['partial ', 'words'], 'hang'));
    const stream = await openStream(`${first.url}/v1/chat`, { body: { prompt: 'Talk.', tools: [] } });
    const seen: StreamEvent[] = [];
    // However the text was split into events, it is all shown (and so stored) once it ends in "words".
    while (!answerOf(seen).endsWith('words')) {
      const more = await stream.until('text');
      if (more.length === 0) throw new Error(`the stream ended before the text did: ${answerOf(seen)}`);
      seen.push(...more);
    }
    const { runId, sessionId } = seen[0].data;
    // A stream shows an event only once it is stored: no wait is needed before the kill.
    await first.kill('SIGKILL');

    const other = await start(noTakeOver);
    await eventually(
      async () => (await api(other.url, 'GET', `/v1/runs/${runId}`)).body.status === 'failed',
      15_000,
    );
    const run = await api(other.url, 'GET', `/v1/runs/${runId}`);
    expect(run.body.error).toMatchObject({ code: 'RUN_ABANDONED', retryable: true });
    const replay = await (await openStream(`${other.url}/v1/runs/${runId}/events`)).rest();
    expect(eventKinds(replay)).toEqual(['run_started', 'text', 'error']);
    expect(answerOf(replay)).toBe('partial words');
    const session = await api(other.url, 'GET', `/v1/sessions/${sessionId}`);
    expect(session.body.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'partial words' });
  });

  it('drains on SIGTERM: a running run finishes before the process exits', async () => {
    const server = await start({ SHUTDOWN_GRACE_MS: '10000' });
    upstream.enqueue(text('slow but complete answer', { delayMs: 100 }));
    const stream = await openStream(`${server.url}/v1/chat`, { body: { prompt: 'Slowly.', tools: [] } });
    await stream.until('text');
    const exit = server.kill('SIGTERM');
    const rest = await stream.rest();
    expect(rest.at(-1)!.data.status).toBe('completed');
    expect(await exit).toBe(0);
  });
});
