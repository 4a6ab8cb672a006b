import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import {
  FakeUpstream,
  hang,
  text,
  toolCalls,
  type FakeResponse,
  type RecordedRequest,
} from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { pairingProblem, proseOf, received, replay, type ListedMessage } from '../support/long-session';
import { api, openStream, type StreamEvent } from '../support/sse-client';

const ALICE = { authorization: 'Bearer alice-secret-123' };
const BOB = { authorization: 'Bearer bob-secret-456' };
const FILES = 6;
/** Prompts of the long session: each reads a 50 KB file (every fourth one a small file beside it, in parallel). */
const PROMPTS = 40;

/** What a summary call of the fake costs: told apart from the answers' (10 prompt tokens each). */
const SUMMARY_USAGE = { promptTokens: 1000, completionTokens: 50 };
const isSummaryCall = (r: RecordedRequest) => !r.body.tools || r.body.tools.length === 0;
const ofType = (events: StreamEvent[], type: string) =>
  events.filter((e) => e.event === type).map((e) => e.data);

/**
 * An answer of about 10,000 tokens: the tool results going out cut to a quarter of the window and
 * pruned once older, answers this long are what makes a session on a 16k window need summaries.
 */
const LONG_ANSWER = proseOf(40 * 1024, 77);

/** The model of these tests: reads the file a prompt names (every fourth prompt the small file beside it, in parallel), then says so; writes a summary when asked for one. */
function model(request: RecordedRequest): FakeResponse {
  return answering(request, false);
}

/** `model`, saying so at length (LONG_ANSWER, in eight pieces) with `long`. */
function longModel(request: RecordedRequest): FakeResponse {
  return answering(request, true);
}

function answering(request: RecordedRequest, long: boolean): FakeResponse {
  if (isSummaryCall(request))
    return text('The user had files read one after another; each was read whole.', { usage: SUMMARY_USAGE });
  const last = request.body.messages.at(-1)!;
  if (last.role !== 'user') return long ? text(LONG_ANSWER, { pieces: 8 }) : text('Read it.');
  const content = typeof last.content === 'string' ? last.content : '';
  const write = /Prompt (\d+): write (\S+)/.exec(content);
  if (write)
    return toolCalls([
      { id: `call_${write[1]}`, name: 'write_file', arguments: { path: write[2], content: 'x\n' } },
    ]);
  const [, k, path] = /Prompt (\d+): read (\S+)/.exec(content) ?? ['', '0', 'small.txt'];
  const read = { id: `call_${k}`, name: 'read_file', arguments: { path } };
  return Number(k) % 4 === 3
    ? toolCalls([read, { id: `call_${k}_small`, name: 'read_file', arguments: { path: 'small.txt' } }])
    : toolCalls([read]);
}

describe('long sessions on a small window (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  const env = (upstreamUrl: string, contextTokens = '16000') => ({
    OPENAI_BASE_URL: upstreamUrl,
    LLM_MODEL: 'tiny-window-model',
    LLM_CONTEXT_TOKENS: contextTokens,
    MAX_ITERATIONS: '4',
    RATE_LIMIT_RUNS_PER_MINUTE: '100000',
    API_KEYS: 'alice:alice-secret-123,bob:bob-secret-456',
  });

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp(env(upstream.baseUrl));
    for (let i = 0; i < FILES; i++) writeFileSync(join(app.workspace, `big-${i}.txt`), proseOf(50 * 1024, i));
    writeFileSync(join(app.workspace, 'small.txt'), proseOf(2 * 1024, 99));
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  async function newSession(url = app.url): Promise<string> {
    const created = await api(url, 'POST', '/v1/sessions', {}, ALICE);
    expect(created.status).toBe(201);
    return created.body.id;
  }

  async function prompt(sessionId: string, content: string, url = app.url): Promise<StreamEvent[]> {
    const stream = await openStream(`${url}/v1/sessions/${sessionId}/messages`, {
      body: { content },
      headers: ALICE,
    });
    expect(stream.status).toBe(200);
    return stream.rest(30_000);
  }

  async function listed(sessionId: string, url = app.url): Promise<ListedMessage[]> {
    const got = await api(url, 'GET', `/v1/sessions/${sessionId}`, undefined, ALICE);
    expect(got.status).toBe(200);
    return got.body.messages;
  }

  /**
   * Checks every model call while the fake holds its answer: its pairing, and that replaying
   * `GET /v1/sessions/:id` gives exactly what it was sent (the store may be a moment behind a call
   * sent ahead of its step's commit, so the replay is read again until it matches, or times out).
   * Also notes any stored message whose content ever changed.
   */
  function watch(getUrl: () => string, sessionId: () => string) {
    const seen = new Map<string, string | null>();
    const found = {
      calls: 0,
      summaryCalls: 0,
      pairing: [] as string[],
      mismatches: [] as unknown[],
      rewritten: new Set<string>(),
    };
    const note = (messages: ListedMessage[]) => {
      for (const m of messages) {
        if (seen.has(m.id) && seen.get(m.id) !== m.content) found.rewritten.add(m.id);
        seen.set(m.id, m.content);
      }
    };
    upstream.beforeAnswer = async (request) => {
      const sent = received(request.body);
      const problem = pairingProblem(sent);
      if (problem) found.pairing.push(`call ${request.index}: ${problem}`);
      if (isSummaryCall(request)) {
        found.summaryCalls++;
        return;
      }
      found.calls++;
      // One mismatch fails the test: the calls after it are not waited for.
      if (found.mismatches.length > 0) return;
      let last: unknown = null;
      for (let attempt = 0; attempt < 100; attempt++) {
        const messages = await listed(sessionId(), getUrl());
        note(messages);
        last = replay(messages, sent);
        if (isDeepStrictEqual(last, sent)) return;
        await sleep(20);
      }
      found.mismatches.push({ call: request.index, sent, replayed: last });
    };
    return { found, note };
  }

  it('keeps a session of dozens of prompts with 50 KB tool results completing on a 16k window, the model getting exactly the replay of the session', async () => {
    upstream.fallback = longModel;
    upstream.contextWindow = 16_000;
    const sessionId = await newSession();
    const { found, note } = watch(
      () => app.url,
      () => sessionId,
    );
    const compactions: Record<string, number>[] = [];
    for (let k = 0; k < PROMPTS; k++) {
      const events = await prompt(sessionId, `Prompt ${k}: read big-${k % FILES}.txt`);
      expect(ofType(events, 'error')).toEqual([]);
      expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
      compactions.push(...ofType(events, 'context_compacted'));
      // A summary is one of the run's model calls: its tokens are in the run's usage, beside its steps'.
      const summaries = ofType(events, 'context_compacted').filter((c) => c.summarizedMessages > 0).length;
      const steps = ofType(events, 'step_finished').map((e) => e.usage);
      expect(events.at(-1)!.data.usage).toMatchObject({
        promptTokens: steps.reduce((t, u) => t + u.promptTokens, 0) + summaries * SUMMARY_USAGE.promptTokens,
        completionTokens:
          steps.reduce((t, u) => t + u.completionTokens, 0) + summaries * SUMMARY_USAGE.completionTokens,
      });
      // Published after its commit, before the call it made room for.
      for (const [i, e] of events.entries()) {
        if (e.event === 'context_compacted')
          expect(events.slice(i + 1).some((n) => n.event === 'step_finished')).toBe(true);
      }
    }
    const messages = await listed(sessionId);
    note(messages);

    expect(upstream.requests.filter((r) => r.refused)).toEqual([]);
    expect(found.pairing).toEqual([]);
    expect(found.mismatches).toEqual([]);
    expect([...found.rewritten]).toEqual([]);
    expect(found.calls).toBe(2 * PROMPTS);
    // It did have to make room, both ways, and says what it did.
    expect(found.summaryCalls).toBeGreaterThan(0);
    expect(compactions.some((c) => c.prunedMessages > 0)).toBe(true);
    expect(compactions.some((c) => c.summarizedMessages > 0)).toBe(true);
    for (const c of compactions) expect(c.tokensAfter).toBeLessThan(c.tokensBefore);
    // Nothing deleted: every prompt, call and result is still listed, marked.
    expect(messages.filter((m) => m.role === 'user')).toHaveLength(PROMPTS);
    expect(messages.filter((m) => m.role === 'tool')).toHaveLength(PROMPTS + PROMPTS / 4);
    const summaries = messages.filter((m) => m.kind === 'summary');
    expect(summaries.length).toBe(found.summaryCalls);
    for (const s of summaries) {
      expect(s.role).toBe('system');
      const from = messages.findIndex((m) => m.id === s.summarizes!.fromId);
      const to = messages.findIndex((m) => m.id === s.summarizes!.toId);
      // In its place: right after the span it stands in for, every message of which is marked.
      expect(messages.indexOf(s)).toBe(to + 1);
      expect(messages.slice(from, to + 1).every((m) => m.context === 'summarized')).toBe(true);
    }

    // A new process on the same database goes on with the session from what is stored.
    const again = await startApp(
      { ...env(upstream.baseUrl), WORKSPACE_ROOT: app.workspace },
      app.databaseUrl,
    );
    try {
      const before = found.calls;
      const { found: after } = watch(
        () => again.url,
        () => sessionId,
      );
      const events = await prompt(sessionId, `Prompt ${PROMPTS}: read big-0.txt`, again.url);
      expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
      expect(after.mismatches).toEqual([]);
      expect(after.pairing).toEqual([]);
      expect(after.calls).toBe(2);
      expect(before).toBe(2 * PROMPTS);
      // The summaries stored before the restart are what the new process sends.
      const firstAfterRestart = received(upstream.requests.filter((r) => !isSummaryCall(r)).at(-2)!.body);
      expect(firstAfterRestart[1].content).toMatch(/^Summary of the earlier conversation:/);
    } finally {
      await again.close();
    }
  }, 240_000);

  it('runs the 200 prompts of the issue (50 KB each, 16k window) without a failed run, an orphaned result or a rewritten message', async () => {
    upstream.fallback = model;
    upstream.contextWindow = 16_000;
    const pairing: string[] = [];
    upstream.beforeAnswer = (request) => {
      const problem = pairingProblem(received(request.body));
      if (problem) pairing.push(`call ${request.index}: ${problem}`);
      return Promise.resolve();
    };
    const sessionId = await newSession();
    const seen = new Map<string, string | null>();
    const rewritten: string[] = [];
    const outcomes = new Map<string, number>();
    for (let k = 0; k < 200; k++) {
      const events = await prompt(sessionId, `Prompt ${k}: read big-${k % FILES}.txt`);
      const end = events.at(-1)!.data;
      const outcome = `${end.type} ${end.status ?? end.code}`;
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      if (k % 40 === 39) {
        for (const m of await listed(sessionId)) {
          if (seen.has(m.id) && seen.get(m.id) !== m.content) rewritten.push(m.id);
          seen.set(m.id, m.content);
        }
      }
    }
    expect([...outcomes]).toEqual([['done completed', 200]]);
    expect(upstream.requests.filter((r) => r.refused)).toHaveLength(0);
    expect(pairing).toEqual([]);
    expect(rewritten).toEqual([]);
    const messages = await listed(sessionId);
    expect(messages.filter((m) => m.role === 'user')).toHaveLength(200);
    // The last call was exactly the replay of the stored session.
    const lastCall = upstream.requests.filter((r) => !isSummaryCall(r)).at(-1)!;
    const sent = received(lastCall.body);
    expect(replay(messages, sent).slice(0, -1)).toEqual(sent);
  }, 180_000);

  it.each(['openai', 'anthropic'] as const)(
    'compacts further and sends the call once more when the upstream (%s) still says the request is too long',
    async (style) => {
      // The server believes in a window of 40k tokens; the upstream takes 16k.
      const believing = await startApp(
        { ...env(upstream.baseUrl, '40000'), WORKSPACE_ROOT: app.workspace },
        app.databaseUrl,
      );
      try {
        upstream.fallback = model;
        upstream.contextWindow = 16_000;
        upstream.refuseAs = style;
        const sessionId = await newSession(believing.url);
        const { found } = watch(
          () => believing.url,
          () => sessionId,
        );
        let refusedBefore = 0;
        for (let k = 0; k < 4; k++) {
          const events = await prompt(sessionId, `Prompt ${k}: read big-${k % FILES}.txt`, believing.url);
          expect(ofType(events, 'error')).toEqual([]);
          expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
          const refused = upstream.requests.filter((r) => r.refused).length;
          if (refused > refusedBefore) expect(ofType(events, 'context_compacted').length).toBeGreaterThan(0);
          refusedBefore = refused;
        }
        expect(refusedBefore).toBeGreaterThan(0);
        expect(found.mismatches).toEqual([]);
        expect(found.pairing).toEqual([]);
      } finally {
        await believing.close();
      }
    },
    60_000,
  );

  it('gives a result pruned in an earlier run as its stub to every later run (read without its content)', async () => {
    // 40k tokens: pruning alone makes room for a while, so pruned results are read by later runs.
    const roomy = await startApp(
      { ...env(upstream.baseUrl, '40000'), WORKSPACE_ROOT: app.workspace },
      app.databaseUrl,
    );
    try {
      upstream.fallback = model;
      const sessionId = await newSession(roomy.url);
      const { found } = watch(
        () => roomy.url,
        () => sessionId,
      );
      for (let k = 0; k < 7; k++) {
        const events = await prompt(sessionId, `Prompt ${k}: read big-${k % FILES}.txt`, roomy.url);
        expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
      }
      const messages = await listed(sessionId, roomy.url);
      const pruned = messages.filter((m) => m.context === 'pruned');
      expect(pruned.length).toBeGreaterThan(1);
      expect(messages.some((m) => m.kind === 'summary')).toBe(false);
      expect(found.mismatches).toEqual([]);
      expect(found.calls).toBe(14);
      // The last run's first call carried results pruned by earlier runs, as stubs read without their content.
      const stubs = received(upstream.requests.at(-2)!.body).filter((m) =>
        /^\[output of read_file pruned to save context: 50 KB; call the tool again to see it\]$/.test(
          m.content,
        ),
      );
      expect(stubs.length).toBeGreaterThan(0);
    } finally {
      await roomy.close();
    }
  }, 60_000);

  it('goes on from the stored summaries when another process takes a waiting run up', async () => {
    upstream.fallback = longModel;
    const sessionId = await newSession();
    for (let k = 0; k < 3; k++) await prompt(sessionId, `Prompt ${k}: read big-${k % FILES}.txt`);
    expect((await listed(sessionId)).some((m) => m.kind === 'summary')).toBe(true);

    const other = await startApp(
      { ...env(upstream.baseUrl), WORKSPACE_ROOT: app.workspace },
      app.databaseUrl,
    );
    try {
      const stream = await openStream(`${app.url}/v1/sessions/${sessionId}/messages`, {
        body: { content: 'Prompt 3: write taken-over.txt' },
        headers: ALICE,
      });
      const waiting = (await stream.until('tool_approval_required')).at(-1)!.data;
      // The approval goes to the other process, which takes the run up from the store and drives it on.
      const { found } = watch(
        () => other.url,
        () => sessionId,
      );
      const approved = await api(
        other.url,
        'POST',
        `/v1/runs/${waiting.runId}/tool-calls/${waiting.toolCallId}/approval`,
        { approve: true },
        ALICE,
      );
      expect(approved.status).toBe(202);
      const rest = await stream.rest();
      expect(rest.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
      expect(found.calls).toBe(1);
      expect(found.mismatches).toEqual([]);
      expect(found.pairing).toEqual([]);
      const sent = received(upstream.requests.at(-1)!.body);
      expect(sent[1].content).toMatch(/^Summary of the earlier conversation:/);
    } finally {
      await other.close();
    }
  }, 60_000);

  it('fails only a prompt that does not fit the window alone (CONTEXT_TOO_LONG), and the session goes on', async () => {
    upstream.fallback = model;
    const sessionId = await newSession();
    const huge = `Prompt 0: ${proseOf(100 * 1024, 7)}`;
    const failed = await prompt(sessionId, huge);
    expect(failed.at(-1)!.data).toMatchObject({ type: 'error', code: 'CONTEXT_TOO_LONG', retryable: false });
    expect(upstream.requests).toHaveLength(0);

    const next = await prompt(sessionId, 'Prompt 1: read small.txt');
    expect(next.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    // The prompt too long to send is summarized away, not dropped or rewritten.
    const messages = await listed(sessionId);
    expect(messages.find((m) => m.content === huge)?.context).toBe('summarized');
  }, 60_000);

  it('summarizes a session on demand (POST /v1/sessions/:id/compact), and the next call starts from the summary', async () => {
    upstream.fallback = model;
    const sessionId = await newSession();
    for (let k = 0; k < 3; k++) await prompt(sessionId, `Prompt ${k}: read small.txt`);

    const spent = async () =>
      (await api(app.url, 'GET', '/v1/usage?groupBy=session', undefined, ALICE)).body.data.find(
        (r: { sessionId: string }) => r.sessionId === sessionId,
      );
    const before = await spent();
    const compacted = await api(app.url, 'POST', `/v1/sessions/${sessionId}/compact`, undefined, ALICE);
    expect(compacted.status).toBe(200);
    expect(compacted.body).toMatchObject({ role: 'system', kind: 'summary' });
    // The summary's call is the key's, counted like any: its tokens, no run.
    expect(await spent()).toEqual({
      ...before,
      promptTokens: before.promptTokens + SUMMARY_USAGE.promptTokens,
      completionTokens: before.completionTokens + SUMMARY_USAGE.completionTokens,
    });
    expect(compacted.body.content).toMatch(/^Summary of the earlier conversation:/);
    const messages = await listed(sessionId);
    const newestUser = messages.findLastIndex((m) => m.role === 'user');
    expect(
      messages
        .slice(1, newestUser)
        .filter((m) => m.kind !== 'summary')
        .every((m) => m.context === 'summarized'),
    ).toBe(true);
    expect(messages.slice(newestUser).every((m) => m.context === undefined)).toBe(true);
    expect(messages.find((m) => m.id === compacted.body.summarizes.fromId)).toBe(messages[1]);

    upstream.reset();
    upstream.fallback = model;
    await prompt(sessionId, 'Prompt 3: read small.txt');
    const sent = received(upstream.requests[0].body);
    expect(sent[1]).toEqual({ role: 'system', content: compacted.body.content });
    expect(sent.map((m) => m.role).slice(0, 3)).toEqual(['system', 'system', 'user']);
  });

  it('holds a summary call to the idle timeout like any model call: a silent summarizer fails the run, and the on-demand compaction answers 502', async () => {
    const quick = await startApp(
      { ...env(upstream.baseUrl), LLM_IDLE_TIMEOUT_MS: '1000', WORKSPACE_ROOT: app.workspace },
      app.databaseUrl,
    );
    try {
      upstream.fallback = longModel;
      const sessionId = await newSession(quick.url);
      for (let k = 0; k < 2; k++)
        await prompt(sessionId, `Prompt ${k}: read big-${k % FILES}.txt`, quick.url);
      upstream.fallback = (request) => (isSummaryCall(request) ? hang() : longModel(request));

      const events = await prompt(sessionId, 'Prompt 2: read big-2.txt', quick.url);
      expect(events.at(-1)!.data).toMatchObject({ type: 'error', code: 'UPSTREAM_TIMEOUT' });

      const compacted = await api(quick.url, 'POST', `/v1/sessions/${sessionId}/compact`, undefined, ALICE);
      expect(compacted.status).toBe(502);
      expect(compacted.body).toMatchObject({ code: 'UPSTREAM_TIMEOUT', retryable: true });
    } finally {
      await quick.close();
    }
  });

  it("reserves the call after a summary: a run whose summary left no room under the session's maxTokens ends there, no call after it", async () => {
    // Every call's prompt (at most COMPACT_AT of the 16k window) fits 20,000 tokens beside what the
    // run used; a summary reported at 20,000 tokens leaves none for the call it made room for.
    const costlySummary = { promptTokens: 20_000, completionTokens: 50 };
    const dearSummaries = (request: RecordedRequest) =>
      isSummaryCall(request) ? text('The files were read.', { usage: costlySummary }) : longModel(request);
    const created = await api(app.url, 'POST', '/v1/sessions', { maxTokens: 20_000 }, ALICE);
    expect(created.status).toBe(201);
    const sessionId: string = created.body.id;
    let events: StreamEvent[] = [];
    for (let k = 0; k < 6 && events.at(-1)?.data.status !== 'budget_exceeded'; k++) {
      upstream.reset();
      upstream.fallback = dearSummaries;
      events = await prompt(sessionId, `Prompt ${k}: read big-${k % FILES}.txt`);
    }
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'budget_exceeded' });
    expect(ofType(events, 'context_compacted').some((c) => c.summarizedMessages > 0)).toBe(true);
    expect(isSummaryCall(upstream.requests.at(-1)!)).toBe(true);
    expect(events.at(-1)!.data.usage.promptTokens).toBeGreaterThanOrEqual(costlySummary.promptTokens);
  });

  it('answers 409 to a compaction while the session has an active run, and 404 for another key’s session', async () => {
    upstream.fallback = model;
    const sessionId = await newSession();
    await prompt(sessionId, 'Prompt 0: read small.txt');
    upstream.enqueue(hang());
    const stream = await openStream(`${app.url}/v1/sessions/${sessionId}/messages`, {
      body: { content: 'Prompt 1: hold on' },
      headers: ALICE,
    });
    const started = await stream.until('run_started');

    const busy = await api(app.url, 'POST', `/v1/sessions/${sessionId}/compact`, undefined, ALICE);
    expect(busy.status).toBe(409);
    expect(busy.body.runId).toBe(started.at(-1)!.data.runId);
    const foreign = await api(app.url, 'POST', `/v1/sessions/${sessionId}/compact`, undefined, BOB);
    expect(foreign.status).toBe(404);

    await api(app.url, 'POST', `/v1/runs/${started.at(-1)!.data.runId}/cancel`, undefined, ALICE);
    await stream.rest();
  });
});
