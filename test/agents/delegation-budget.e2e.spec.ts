import { DataSource } from 'typeorm';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { agentsFile, byConversation } from '../support/delegation-scripts';
import { eventually } from '../support/eventually';
import { api, openStream, type StreamEvent } from '../support/sse-client';

/** A worker's system prompt: long enough that three of its calls weigh more than one and a half reservations. */
const WORKER = `You are the worker. ${'Do the task you are given carefully, then answer in one short sentence. '.repeat(16)}`;
/** The most output a call may ask for here (LLM_MAX_OUTPUT_TOKENS). */
const MAX_OUTPUT = 40;

const ofType = (events: StreamEvent[], type: string) =>
  events.filter((e) => e.event === type).map((e) => e.data);

/**
 * The root delegates three tasks of one size at once; each worker answers slowly (so they overlap),
 * with no usage reported: each call is counted as its reservation counted it.
 */
function script(upstream: FakeUpstream): void {
  upstream.fallback = byConversation((c) => {
    if (c.system === WORKER) {
      return text('Done.', { usage: { promptTokens: 0, completionTokens: 0 }, delayMs: 60 });
    }
    if (c.results.size === 0) {
      return toolCalls(
        ['A', 'B', 'C'].map((t) => ({
          id: `d${t}`,
          name: 'delegate',
          arguments: { agent: 'worker', task: `task ${t}` },
        })),
        { usage: { promptTokens: 0, completionTokens: 0 } },
      );
    }
    return text('All done.', { usage: { promptTokens: 0, completionTokens: 0 } });
  });
}

/**
 * A root session's maxTokens holds for its whole tree of runs ("Agents and delegation": a child's
 * usage counts against the root session's maxTokens), however many children run at once: every
 * call of the tree reserves on the root run's counter, in the same statement as the key's.
 */
describe("a root session's limits over children running at once (e2e)", () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      LLM_MODEL: 'test-model',
      LLM_MAX_OUTPUT_TOKENS: String(MAX_OUTPUT),
      AGENTS_CONFIG: agentsFile({
        worker: { description: 'Does one task.', systemPrompt: WORKER, tools: ['read_file'] },
      }),
    });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.reset();
    script(upstream);
  });

  async function tree(prompt: string, maxTokens?: number): Promise<StreamEvent[]> {
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { prompt, tools: ['delegate'], ...(maxTokens === undefined ? {} : { maxTokens }) },
    });
    expect(stream.status).toBe(200);
    return stream.rest(30_000);
  }

  it("never lets the tree's stored usage pass the root's maxTokens, and the root ends budget_exceeded", async () => {
    // What the root's first call and one worker's call count, measured on a tree without a limit.
    const calibration = await tree('Split the work');
    const rootId = calibration[0].data.runId;
    const rootStep = ofType(calibration, 'step_finished').find((s) => s.runId === rootId)!.usage;
    const rootFirst = rootStep.promptTokens + rootStep.completionTokens;
    const workerSteps = ofType(calibration, 'step_finished').filter((s) => s.runId !== rootId);
    expect(workerSteps).toHaveLength(3);
    const workerPrompt = workerSteps[0].usage.promptTokens;
    const workerCall = workerPrompt + workerSteps[0].usage.completionTokens;
    // Room, after the root's first call, for one worker's reservation and a half: three workers'
    // calls (each of which fits alone) would pass it.
    const maxTokens = rootFirst + Math.floor(1.5 * (workerPrompt + MAX_OUTPUT));
    expect(rootFirst + 3 * workerCall).toBeGreaterThan(maxTokens);
    upstream.reset();
    script(upstream);

    const events = await tree('Split the work', maxTokens);
    const root = events[0].data.runId;
    const done = events.at(-1)!.data;
    expect(done).toMatchObject({ type: 'done', runId: root, status: 'budget_exceeded' });
    // Each delegation answered (the history stays well-paired), at least one of them by a worker
    // whose call fit; the others were refused before they called the model.
    const finished = ofType(events, 'subagent_finished');
    expect(finished).toHaveLength(3);
    expect(finished.filter((f) => f.status === 'completed').length).toBeGreaterThanOrEqual(1);
    expect(finished.some((f) => f.status === 'budget_exceeded')).toBe(true);
    expect(
      ofType(events, 'tool_call_result')
        .map((r) => r.toolCallId)
        .sort(),
    ).toEqual(['dA', 'dB', 'dC']);
    // The whole tree's usage, as stored: never past the root's limit.
    const run = (await api(app.url, 'GET', `/v1/runs/${root}`)).body;
    expect(run.usage.promptTokens + run.usage.completionTokens).toBeLessThanOrEqual(maxTokens);
    const db = app.app.get(DataSource);
    const [stored] = await db.query(
      `SELECT coalesce(sum(m.prompt_tokens + m.completion_tokens), 0)::int AS tokens
         FROM model_calls m JOIN sessions s ON s.id = m.session_id
        WHERE s.id = $1 OR s.root_session_id = $1`,
      [done.sessionId],
    );
    expect(stored.tokens).toBeGreaterThan(rootFirst);
    expect(stored.tokens).toBeLessThanOrEqual(maxTokens);
    // The tree's counter goes once its root has ended: key_spend does not grow a row per run.
    await eventually(async () => {
      const rows = await db.query(`SELECT 1 FROM key_spend WHERE window_kind = 'run'`);
      return rows.length === 0;
    });
  });
});
