import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { createTestDatabase } from '../support/database';
import { agentsFile, byConversation, delegateOnce } from '../support/delegation-scripts';
import { eventually } from '../support/eventually';
import { spawnServer, type ServerProcess } from '../support/server-process';
import { answerOf, api, openStream } from '../support/sse-client';

const PLANNER = 'You are the planner.';
const WRITER = 'You are the writer.';

/** Real server processes (`node dist/main.js`, built first) sharing one PostgreSQL. */
describe('a tree of delegations across server processes (e2e)', () => {
  let upstream: FakeUpstream;
  let env: Record<string, string>;
  let workspace: string;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    workspace = mkdtempSync(join(tmpdir(), 'loopwright-delegation-proc-'));
    env = {
      DATABASE_URL: await createTestDatabase(),
      OPENAI_BASE_URL: upstream.baseUrl,
      WORKSPACE_ROOT: workspace,
      RUN_LEASE_MS: '2000',
      AGENTS_CONFIG: agentsFile({
        planner: { description: 'Plans.', systemPrompt: PLANNER, mode: 'write' },
        writer: { description: 'Writes.', systemPrompt: WRITER, mode: 'write' },
      }),
    };
  });
  afterAll(async () => {
    await Promise.all(servers.splice(0).map((s) => s.kill('SIGKILL')));
    await upstream.close();
  });

  it('finishes the whole tree once when the approval is given at the root on another process after the first was killed', async () => {
    let writes = 0;
    upstream.fallback = byConversation((c) => {
      if (c.system === WRITER) {
        if (c.results.size === 0) {
          writes++;
          return toolCalls([
            { id: 'w1', name: 'write_file', arguments: { path: 'tree.txt', content: 'tree' } },
          ]);
        }
        return text('Writer: done');
      }
      if (c.system === PLANNER) {
        return delegateOnce(c, 'Planner', { callId: 'p1', agent: 'writer', task: 'write' });
      }
      return delegateOnce(c, 'Root', { callId: 'r1', agent: 'planner', task: 'plan' });
    });
    const first = await spawnServer(env);
    servers.push(first);
    const second = await spawnServer(env);
    servers.push(second);

    const stream = await openStream(`${first.url}/v1/chat`, { body: { prompt: 'Write the tree' } });
    const rootId = stream.headers.get('x-run-id')!;
    await eventually(
      async () => (await api(first.url, 'GET', `/v1/runs/${rootId}`)).body.pendingToolCalls?.length === 1,
    );
    // The process that ran the three runs dies while the root waits.
    stream.close();
    await first.kill('SIGKILL');

    const approval = await api(second.url, 'POST', `/v1/runs/${rootId}/tool-calls/w1/approval`, {
      approve: true,
    });
    expect(approval.status).toBe(202);
    const events = await (await openStream(`${second.url}/v1/runs/${rootId}/events`)).rest(30_000);
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(answerOf(events.filter((e) => e.data.runId === rootId))).toBe('Root: Planner: Writer: done');
    expect(events.filter((e) => e.event === 'done')).toHaveLength(1);
    expect(readFileSync(join(workspace, 'tree.txt'), 'utf8')).toBe('tree');
    expect(writes).toBe(1);
  });
});
