import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeUpstream, text } from '../support/fake-upstream';
import { createTestDatabase } from '../support/database';
import { spawnServer, type ServerProcess } from '../support/server-process';
import { api, openStream, type OpenStream, type StreamEvent } from '../support/sse-client';

/** An answer long enough, streamed slowly enough, for a kill to land in its middle. */
const slowAnswer = () => text(Array.from({ length: 300 }, (_, i) => `w${i}`).join(' '), { delayMs: 20 });

async function readText(stream: OpenStream, count: number): Promise<StreamEvent[]> {
  const seen: StreamEvent[] = [];
  while (seen.filter((e) => e.event === 'text').length < count) {
    const more = await stream.until('text');
    if (more.length === 0) throw new Error('the stream ended before the answer did');
    seen.push(...more);
  }
  return seen;
}

/**
 * The model call a killed process was in counts ("Budgets and usage"): the step the replica closes
 * as `interrupted` carries its estimated usage, and the run's and GET /v1/usage include it.
 */
describe('the usage of a step interrupted by a take-over (e2e)', () => {
  let upstream: FakeUpstream;
  let env: Record<string, string>;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    env = {
      DATABASE_URL: await createTestDatabase(),
      OPENAI_BASE_URL: upstream.baseUrl,
      WORKSPACE_ROOT: join(mkdtempSync(join(tmpdir(), 'loopwright-takeover-usage-')), 'workspace'),
      RUN_LEASE_MS: '1000',
    };
  });
  afterAll(async () => {
    await Promise.all(servers.splice(0).map((s) => s.kill('SIGKILL')));
    await upstream.close();
  });

  it('kill -9 mid-answer: the interrupted step is counted, estimated, in its step_finished, done, the run and GET /v1/usage', async () => {
    const a = await spawnServer(env);
    const b = await spawnServer(env);
    servers.push(a, b);
    upstream.enqueue(slowAnswer(), text('The end.', { usage: { promptTokens: 40, completionTokens: 3 } }));
    const stream = await openStream(`${a.url}/v1/chat`, { body: { prompt: 'Talk.', tools: [] } });
    const seen = await readText(stream, 5);
    const { runId } = seen[0].data;
    await a.kill('SIGKILL');
    seen.push(...(await stream.rest()));
    const rest = await (
      await openStream(`${b.url}/v1/runs/${runId}/events`, {
        headers: { 'Last-Event-ID': String(seen.at(-1)!.id) },
      })
    ).rest(30_000);
    const log = [...seen, ...rest];

    const steps = log.filter((e) => e.event === 'step_finished').map((e) => e.data);
    expect(steps.map((s) => s.finishReason)).toEqual(['interrupted', 'stop']);
    const [cut, last] = steps.map((s) => s.usage);
    expect(cut).toMatchObject({ estimated: true });
    expect(cut.promptTokens).toBeGreaterThan(0);
    expect(cut.completionTokens).toBeGreaterThan(0);
    expect(last).toMatchObject({ promptTokens: 40, completionTokens: 3 });
    const sum = {
      promptTokens: cut.promptTokens + 40,
      completionTokens: cut.completionTokens + 3,
      estimated: true,
    };
    const done = log.at(-1)!.data;
    expect(done).toMatchObject({ type: 'done', status: 'completed', usage: sum });
    const run = await api(b.url, 'GET', `/v1/runs/${runId}`);
    expect(run.body.usage).toMatchObject(sum);
    const from = new Date(Date.now() - 3600_000).toISOString();
    const usage = await api(b.url, 'GET', `/v1/usage?from=${from}&groupBy=model`);
    expect(usage.body.data).toEqual([
      expect.objectContaining({
        runs: 1,
        promptTokens: sum.promptTokens,
        completionTokens: sum.completionTokens,
      }),
    ]);
  });

  it("a cancel while the run has no live process counts the call it was in, in the cancelled run's done.usage", async () => {
    const slowLease = { ...env, RUN_LEASE_MS: '3000' };
    const a = await spawnServer(slowLease);
    const b = await spawnServer(slowLease);
    servers.push(a, b);
    upstream.enqueue(slowAnswer());
    const stream = await openStream(`${a.url}/v1/chat`, { body: { prompt: 'Talk.', tools: [] } });
    const seen = await readText(stream, 5);
    const { runId } = seen[0].data;
    await a.kill('SIGKILL');
    expect((await api(b.url, 'POST', `/v1/runs/${runId}/cancel`)).status).toBe(202);

    const log = await (await openStream(`${b.url}/v1/runs/${runId}/events`)).rest(30_000);
    const done = log.at(-1)!.data;
    expect(done).toMatchObject({ type: 'done', status: 'cancelled', usage: { estimated: true } });
    expect(done.usage.promptTokens).toBeGreaterThan(0);
    expect(done.usage.completionTokens).toBeGreaterThan(0);
    expect((await api(b.url, 'GET', `/v1/runs/${runId}`)).body.usage).toEqual(done.usage);
  });
});
