import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunksThen, endless, FakeUpstream, text } from '../support/fake-upstream';
import { createTestDatabase } from '../support/database';
import { spawnServer, type ServerProcess } from '../support/server-process';
import { api, openStream, type StreamEvent } from '../support/sse-client';

/** The most output a call may ask for here, and the fewest a call is sent with (budget-guard.service.ts). */
const MAX_OUTPUT = 40;
const MIN_OUTPUT = 16;
/** Runs that race for one limit: far more than it holds. */
const RACERS = 24;

const KEYS = { race: 'sk-race', team: 'sk-team', cut: 'sk-cut', calib: 'sk-calib' } as const;
const auth = (secret: string, endUser?: string) => ({
  authorization: `Bearer ${secret}`,
  ...(endUser === undefined ? {} : { 'x-end-user': endUser }),
});
const ofType = (events: StreamEvent[], type: string) =>
  events.filter((e) => e.event === type).map((e) => e.data);

/**
 * A slow answer whose usage the provider does not report (zeros), so it is counted as "Long
 * sessions" counts a request — the way the reservation counted its prompt: what is stored of a call
 * is then exactly comparable with what was reserved for it.
 */
const slowAnswer = () =>
  text('Fine, done.', { usage: { promptTokens: 0, completionTokens: 0 }, delayMs: 40 });

/**
 * Budgets by reservation ("Budgets and usage"): before a model call is sent, what it may cost at
 * most is reserved on every limit that applies, atomically in PostgreSQL; so however many runs race
 * on however many processes, the stored spend never passes a limit — and a call that fits is made.
 */
describe('budgets by reservation across two processes (e2e)', () => {
  let upstream: FakeUpstream;
  const servers: ServerProcess[] = [];
  let a: ServerProcess;
  let b: ServerProcess;
  /** The tokens one run's single call counts: its prompt, and its whole call (prompt + answer). */
  let prompt: number;
  let call: number;
  /** A limit a few calls wide. */
  let limit: number;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    const env = {
      DATABASE_URL: await createTestDatabase(),
      OPENAI_BASE_URL: upstream.baseUrl,
      LLM_MODEL: 'test-model',
      LLM_MAX_OUTPUT_TOKENS: String(MAX_OUTPUT),
      ANSWER_MAX_BYTES: '2048',
      RUN_LEASE_MS: '1000',
      // The racers all start at once: only the budget may refuse one, never the key's other limits.
      MAX_ACTIVE_RUNS_PER_KEY: '64',
      RATE_LIMIT_RUNS_PER_MINUTE: '1000',
      WORKSPACE_ROOT: join(mkdtempSync(join(tmpdir(), 'loopwright-reservations-')), 'workspace'),
      API_KEYS: Object.entries(KEYS)
        .map(([name, secret]) => `${name}:${secret}`)
        .join(','),
    };
    // What one racer's call counts, measured on a process without limits (same prompt shape).
    const calibration = await spawnServer(env);
    servers.push(calibration);
    upstream.fallback = slowAnswer();
    const events = await chat(calibration, KEYS.calib, 'race-00');
    const usage = ofType(events, 'done')[0].usage;
    prompt = usage.promptTokens;
    call = usage.promptTokens + usage.completionTokens;
    await calibration.kill('SIGKILL');
    // Three reservations (prompt + MAX_OUTPUT) and a half fit at once; far fewer calls than racers.
    limit = Math.floor(3.5 * (prompt + MAX_OUTPUT));
    const budgets = `race=${limit}tokens/day,team/*=${limit}tokens/day,cut=${8 * limit}tokens/day`;
    a = await spawnServer({ ...env, BUDGETS: budgets });
    b = await spawnServer({ ...env, BUDGETS: budgets });
    servers.push(a, b);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill('SIGKILL')));
    await upstream?.close();
  });
  beforeEach(() => {
    upstream.reset();
    upstream.fallback = slowAnswer();
  });

  async function chat(
    server: ServerProcess,
    secret: string,
    promptText: string,
    endUser?: string,
  ): Promise<StreamEvent[]> {
    const stream = await openStream(`${server.url}/v1/chat`, {
      body: { prompt: promptText, tools: [] },
      headers: auth(secret, endUser),
    });
    expect(stream.status).toBe(200);
    return stream.rest(60_000);
  }

  /**
   * How a start of `secret` (for `endUser`) ends: `refused` (429 BUDGET_EXCEEDED: its window had no
   * room for a call when it started) or its run's final status.
   */
  async function start(server: ServerProcess, secret: string, promptText: string, endUser?: string) {
    const stream = await openStream(`${server.url}/v1/chat`, {
      body: { prompt: promptText, tools: [] },
      headers: auth(secret, endUser),
    });
    if (stream.status === 429) {
      expect(stream.errorBody).toMatchObject({ code: 'BUDGET_EXCEEDED' });
      return 'refused';
    }
    expect(stream.status).toBe(200);
    return ofType(await stream.rest(60_000), 'done')[0].status as string;
  }

  async function usage(server: ServerProcess, secret: string, query: string, endUser?: string) {
    const from = new Date(Date.now() - 3600_000).toISOString();
    const res = await api(
      server.url,
      'GET',
      `/v1/usage?from=${from}&${query}`,
      undefined,
      auth(secret, endUser),
    );
    expect(res.status).toBe(200);
    return res.body as {
      data: Record<string, number | string | null>[];
      limits: { limit: string; window: string; used: number; left: number }[];
    };
  }

  /** Starts `RACERS` one-call runs at once, alternating between the two processes; how each ended. */
  function race(secret: string, tag: string, endUser?: string): Promise<string[]> {
    return Promise.all(
      Array.from({ length: RACERS }, (_, i) =>
        start(i % 2 === 0 ? a : b, secret, `${tag}-${String(i).padStart(2, '0')}`, endUser),
      ),
    );
  }

  /** Once the window has no room for a call: a start is refused, or its run ends over budget without one. */
  async function noRoomLeft(server: ServerProcess, secret: string, endUser?: string): Promise<void> {
    const calls = upstream.requests.length;
    expect(['refused', 'budget_exceeded']).toContain(await start(server, secret, 'more', endUser));
    expect(upstream.requests.length).toBe(calls);
  }

  /** What the stored calls of `secret` (and `endUser`) spent: tokens, the largest prompt, the calls. */
  async function stored(secret: string, endUser?: string) {
    const rows = (await usage(a, secret, 'groupBy=session', endUser)).data as {
      promptTokens: number;
      completionTokens: number;
    }[];
    return {
      tokens: rows.reduce((s, r) => s + r.promptTokens + r.completionTokens, 0),
      largestPrompt: Math.max(...rows.map((r) => r.promptTokens)),
      calls: rows.length,
    };
  }

  it("never lets one key's racing runs on two processes pass its limit, and makes every call that fits", async () => {
    const statuses = await race(KEYS.race, 'race');

    const spent = await stored(KEYS.race);
    expect(spent.tokens).toBeLessThanOrEqual(limit);
    // Each run made one call or none: the calls stored are the runs that completed.
    expect(statuses.filter((s) => s === 'completed')).toHaveLength(spent.calls);
    expect(statuses.every((s) => ['completed', 'budget_exceeded', 'refused'].includes(s))).toBe(true);
    expect(spent.calls).toBeLessThan(RACERS);
    // A run ended over budget only when what was used left no room for its call: every call that fit was made.
    expect(limit - spent.tokens).toBeLessThan(spent.largestPrompt + MIN_OUTPUT);
    expect(spent.calls).toBeGreaterThanOrEqual(Math.floor((limit - prompt - MIN_OUTPUT) / call));
    // No call asked for more output than reserved; nothing stays reserved once the runs ended.
    expect(upstream.requests.every((r) => (r.body.max_tokens ?? 0) <= MAX_OUTPUT)).toBe(true);
    const { limits } = await usage(b, KEYS.race, 'groupBy=day');
    expect(limits).toEqual([
      {
        limit: expect.stringContaining('race'),
        window: 'day',
        used: spent.tokens,
        left: limit - spent.tokens,
      },
    ]);
    await noRoomLeft(b, KEYS.race);
  }, 120_000);

  it("holds each end user of a key to their own limit across both processes; one never spends another's", async () => {
    const statuses = await race(KEYS.team, 'team', 'ann');

    const ann = await stored(KEYS.team, 'ann');
    expect(ann.tokens).toBeLessThanOrEqual(limit);
    expect(statuses.filter((s) => s === 'completed')).toHaveLength(ann.calls);
    expect(ann.calls).toBeLessThan(RACERS);
    expect(limit - ann.tokens).toBeLessThan(ann.largestPrompt + MIN_OUTPUT);

    // ann's spent window is hers alone: ben, of the same key, still has all of his.
    const ben = await chat(b, KEYS.team, 'team-ben', 'ben');
    expect(ofType(ben, 'done')[0].status).toBe('completed');
    const benUsage = await usage(a, KEYS.team, 'groupBy=endUser', 'ben');
    expect(benUsage.data).toEqual([expect.objectContaining({ endUser: 'ben', runs: 1 })]);
    const benSpent = Number(benUsage.data[0].promptTokens) + Number(benUsage.data[0].completionTokens);
    expect(benUsage.limits).toEqual([
      { limit: expect.stringContaining('team/ben'), window: 'day', used: benSpent, left: limit - benSpent },
    ]);
    // The key without the header sees both end users' use.
    const both = await usage(a, KEYS.team, 'groupBy=endUser');
    expect(both.data.map((r) => r.endUser)).toEqual(['ann', 'ben']);
    await noRoomLeft(a, KEYS.team, 'ann');
  }, 120_000);

  it('counts a cut answer and a cancelled one against a token budget, and gives their reservations back', async () => {
    // An answer cut by ANSWER_MAX_BYTES: counted, estimated.
    upstream.enqueue(endless('abc '));
    const cutRun = await chat(a, KEYS.cut, 'cut-1');
    const cutUsage = ofType(cutRun, 'done')[0].usage;
    expect(cutUsage).toMatchObject({ estimated: true });
    expect(cutUsage.completionTokens).toBeGreaterThan(0);

    // A call cancelled mid-stream, on the other process: counted, estimated.
    upstream.enqueue(chunksThen(['A first part, ', 'and a second.'], 'hang'));
    const stream = await openStream(`${b.url}/v1/chat`, {
      body: { prompt: 'cut-2', tools: [] },
      headers: auth(KEYS.cut),
    });
    const head = await stream.until((e) => e.event === 'text' && String(e.data.delta).includes('second'));
    const runId = head[0].data.runId as string;
    expect((await api(a.url, 'POST', `/v1/runs/${runId}/cancel`, undefined, auth(KEYS.cut))).status).toBe(
      202,
    );
    const done = ofType(await stream.rest(), 'done')[0];
    expect(done.status).toBe('cancelled');
    expect(done.usage).toMatchObject({ estimated: true });
    expect(done.usage.completionTokens).toBeGreaterThan(0);

    const tokens = (u: { promptTokens: number; completionTokens: number }) =>
      u.promptTokens + u.completionTokens;
    const { limits } = await usage(b, KEYS.cut, 'groupBy=day');
    // Used: both calls' estimates; left: the rest — neither call holds a reservation any more.
    expect(limits).toEqual([
      {
        limit: expect.stringContaining('cut'),
        window: 'day',
        used: tokens(cutUsage) + tokens(done.usage),
        left: 8 * limit - tokens(cutUsage) - tokens(done.usage),
      },
    ]);
  }, 60_000);

  it("gives a dead process's reservation back when its run is taken over (kill -9 mid-answer)", async () => {
    const words = Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ');
    upstream.enqueue(text(words, { usage: { promptTokens: 0, completionTokens: 0 }, delayMs: 20 }));
    const stream = await openStream(`${a.url}/v1/chat`, {
      body: { prompt: 'cut-3', tools: [] },
      headers: auth(KEYS.cut),
    });
    const seen = await stream.until('text');
    const runId = seen[0].data.runId as string;
    // The call holds its reservation when its process dies.
    const during = (await usage(b, KEYS.cut, 'groupBy=day')).limits[0];
    expect(during.left).toBeLessThan(8 * limit - during.used);
    await a.kill('SIGKILL');
    const rest = await (
      await openStream(`${b.url}/v1/runs/${runId}/events`, { headers: auth(KEYS.cut) })
    ).rest(30_000);
    expect(ofType(rest, 'done')[0]).toMatchObject({ status: 'completed' });

    // Taken over: the interrupted call counted, its reservation given back — nothing stays reserved.
    const day = await usage(b, KEYS.cut, 'groupBy=day');
    const used = Number(day.data[0].promptTokens) + Number(day.data[0].completionTokens);
    expect(day.limits).toEqual([
      { limit: expect.stringContaining('cut'), window: 'day', used, left: 8 * limit - used },
    ]);
  }, 60_000);
});
