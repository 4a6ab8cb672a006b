import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeUpstream, text } from '../support/fake-upstream';
import { createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { spawnServer, type ServerProcess } from '../support/server-process';
import { api, openStream } from '../support/sse-client';

const SECRET = 'sk-ahead';
const LIMIT = 1_000_000;
const RUNS_PER_MINUTE = 4;
const auth = { authorization: `Bearer ${SECRET}` };

/**
 * Under a key's budget, a run's first call is reserved before its start is stored and goes out with
 * the start (CallsAhead): the reservation is the start's look at the budget. A start refused after
 * its call was reserved and sent — here by the key's rate limit, which only the start statement
 * counts — stops the call and counts it as a cancelled call is, giving the reservation back: nothing
 * stays held once every run has ended.
 */
describe('a first call reserved with its start (e2e)', () => {
  let upstream: FakeUpstream;
  let server: ServerProcess;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    upstream.fallback = text('Fine.', { delayMs: 30 });
    server = await spawnServer({
      DATABASE_URL: await createTestDatabase(),
      OPENAI_BASE_URL: upstream.baseUrl,
      LLM_MODEL: 'test-model',
      WORKSPACE_ROOT: join(mkdtempSync(join(tmpdir(), 'loopwright-ahead-')), 'workspace'),
      API_KEYS: `ahead:${SECRET}`,
      BUDGETS: `ahead=${LIMIT}tokens/day`,
      RATE_LIMIT_RUNS_PER_MINUTE: String(RUNS_PER_MINUTE),
      MAX_ACTIVE_RUNS_PER_KEY: '64',
    });
  }, 60_000);
  afterAll(async () => {
    await server?.kill('SIGKILL');
    await upstream?.close();
  });

  /** A start's answer: the run's final status, or the status and message it was refused with. */
  async function start(prompt: string): Promise<string> {
    const stream = await openStream(`${server.url}/v1/chat`, { body: { prompt, tools: [] }, headers: auth });
    if (stream.status !== 200) return `${stream.status} ${(stream.errorBody as { message: string }).message}`;
    const done = (await stream.rest(30_000)).find((e) => e.event === 'done');
    return (done?.data as { status: string }).status;
  }

  async function usage(): Promise<{ runs: number; promptTokens: number; used: number; left: number }> {
    const from = new Date(Date.now() - 3600_000).toISOString();
    const res = await api(server.url, 'GET', `/v1/usage?from=${from}&groupBy=day`, undefined, auth);
    expect(res.status).toBe(200);
    const body = res.body as {
      data: { runs: number; promptTokens: number }[];
      limits: { used: number; left: number }[];
    };
    return { ...body.data[0], ...body.limits[0] };
  }

  it('counts the call of a start its rate limit refused, gives its reservation back, and holds nothing once the runs end', async () => {
    // A first start leaves the key room for more: the next ones send their first call ahead.
    expect(await start('warm')).toBe('completed');
    const onePrompt = (await usage()).promptTokens;
    const ends = await Promise.all(Array.from({ length: 6 }, (_, i) => start(`burst ${i}`)));

    expect(ends.filter((e) => e === 'completed')).toHaveLength(RUNS_PER_MINUTE - 1);
    expect(ends.filter((e) => e.startsWith('429 Rate limit'))).toHaveLength(7 - RUNS_PER_MINUTE);
    // Each refused start's call went out before its refusal: counted (its prompt, estimated) with
    // the runs' calls, though it belongs to no run; and every reservation given back — what is
    // left is the limit less what was used.
    await eventually(async () => {
      const { runs, promptTokens, used, left } = await usage();
      return runs === RUNS_PER_MINUTE && promptTokens > 5 * onePrompt && left === LIMIT - used;
    });
  }, 60_000);
});
