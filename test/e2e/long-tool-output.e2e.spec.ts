import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startApp, type TestApp } from '../support/app';
import { FakeUpstream, text, toolCalls, type RecordedRequest } from '../support/fake-upstream';
import { proseOf, received, type ListedMessage } from '../support/long-session';
import { api, openStream } from '../support/sse-client';

/**
 * A run survives its own tool output ("Long sessions"): a result larger than a quarter of the window
 * is cut when it is sent (marked), and the results of the run's earlier steps are pruned like older
 * ones — so five reads of 50 KB files in one run, on a 16,000-token window where two of them whole
 * do not fit, complete.
 */

const READS = 5;
const WINDOW = 16_000;

/** Reads big-0 … big-4 one step after another, then answers. */
function reader(request: RecordedRequest) {
  const messages = received(request.body);
  const done = messages.length - 1 - messages.findLastIndex((m) => m.role === 'user');
  const step = messages.slice(-done).filter((m) => m.role === 'tool').length;
  if (step >= READS) return text('Read them all.');
  return toolCalls([{ id: `call_read_${step}`, name: 'read_file', arguments: { path: `big-${step}.txt` } }]);
}

describe('a run through its own long tool output (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      LLM_MODEL: 'tiny-window-model',
      LLM_CONTEXT_TOKENS: String(WINDOW),
    });
    for (let i = 0; i < READS; i++) writeFileSync(join(app.workspace, `big-${i}.txt`), proseOf(50 * 1024, i));
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it("completes a run of five 50 KB reads: each result cut to a quarter of the window, the earlier steps' pruned", async () => {
    upstream.fallback = reader;
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Read the five big files.' } });
    expect(stream.status).toBe(200);
    const events = await stream.rest(60_000);
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    expect(events.some((e) => e.event === 'context_compacted')).toBe(true);
    expect(upstream.requests).toHaveLength(READS + 1);

    // Every result went out cut to a quarter of the window (3 characters a token), marked.
    const second = received(upstream.requests[1].body).at(-1)!;
    expect(second).toMatchObject({ role: 'tool', toolCallId: 'call_read_0' });
    expect(second.content.length).toBeLessThan((WINDOW / 4) * 3 + 300);
    expect(second.content).toMatch(
      /\n\[truncated: showing the first 12 KB of 50 KB, more than a quarter of the model's context window; .*\]$/,
    );

    // The last call: the earliest results of this run as stubs, the newest step's cut, not pruned.
    const last = received(upstream.requests[READS].body).filter((m) => m.role === 'tool');
    expect(last[0]).toEqual({
      role: 'tool',
      toolCallId: 'call_read_0',
      content: '[output of read_file pruned to save context: 50 KB; call the tool again to see it]',
    });
    expect(last.at(-1)).toMatchObject({ toolCallId: `call_read_${READS - 1}` });
    expect(last.at(-1)!.content).toMatch(/^[\s\S]{1000,}\[truncated: showing the first/);

    // Stored whole, and marked as pruned where the model got a stub.
    const sessionId = events[0].data.sessionId as string;
    const listed = (await api(app.url, 'GET', `/v1/sessions/${sessionId}`)).body.messages as ListedMessage[];
    const tools = listed.filter((m) => m.role === 'tool');
    expect(tools).toHaveLength(READS);
    for (const m of tools) expect(Buffer.byteLength(m.content ?? '')).toBeGreaterThan(50 * 1024);
    const stubbed = new Set(last.filter((m) => m.content.startsWith('[output of')).map((m) => m.toolCallId));
    expect(stubbed.size).toBeGreaterThan(0);
    for (const m of tools) expect(m.context === 'pruned').toBe(stubbed.has(m.toolCallId));
  });
});
