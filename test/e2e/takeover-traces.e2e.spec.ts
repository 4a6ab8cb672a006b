import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { spawnServer, type ServerProcess } from '../support/server-process';
import { api, openStream } from '../support/sse-client';

type Linked = ReceivedSpan & { links?: { traceId: string; spanId: string }[] };

/**
 * A run taken over after its process was killed: the process never exported the run's first span,
 * so what the replica traces must not hang under it ("Traces": the same trace, every span reachable
 * from one the collector has). Real processes (`node dist/main.js`), as test/e2e/takeover does.
 */
describe('traces of a run taken over from a killed process (e2e)', () => {
  let upstream: FakeUpstream;
  let collector: OtlpReceiver;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    collector = await OtlpReceiver.start();
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill('SIGKILL')));
    await collector.close();
    await upstream.close();
  });

  it('puts the stretch after a kill -9 in the run’s trace as a root linked to the lost stretch, and what follows a wait under it', async () => {
    const env = {
      WORKSPACE_ROOT: join(mkdtempSync(join(tmpdir(), 'loopwright-traces-')), 'workspace'),
      DATABASE_URL: await createTestDatabase(),
      OPENAI_BASE_URL: upstream.baseUrl,
      RUN_LEASE_MS: '1000',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    };
    const a = await spawnServer(env);
    servers.push(a);
    const b = await spawnServer(env);
    servers.push(b);
    upstream.enqueue(
      text(Array.from({ length: 300 }, (_, i) => `w${i}`).join(' '), { delayMs: 20 }),
      toolCalls([{ id: 'write-1', name: 'write_file', arguments: { path: 'out.txt', content: 'x' } }]),
      text('And that is the end.'),
    );
    const stream = await openStream(`${a.url}/v1/chat`, { body: { prompt: 'Talk.' } });
    const head = await stream.until('text');
    const runId = head[0].data.runId as string;
    await a.kill('SIGKILL');
    await stream.rest().catch(() => []);
    // The replica takes the run over; its step asks for an approval, given there: a stretch after a wait follows.
    const follower = await openStream(`${b.url}/v1/runs/${runId}/events`);
    const asked = (await follower.until('tool_approval_required', 30_000)).at(-1)!.data;
    const approved = await api(
      b.url,
      'POST',
      `/v1/runs/${runId}/tool-calls/${String(asked.toolCallId)}/approval`,
      {
        approve: true,
      },
    );
    expect(approved.status).toBe(202);
    await follower.rest(30_000);

    const runSpans = () =>
      collector.named('invoke_agent').filter((s) => s.attributes['loopwright.run.id'] === runId);
    await eventually(
      () => runSpans().some((s) => s.attributes['loopwright.run.status'] === 'completed'),
      30_000,
    );
    const stretches = runSpans() as Linked[];
    expect(stretches).toHaveLength(2);
    const resumed = stretches.find((s) => s.attributes['loopwright.run.status'] === 'requires_action')!;
    const afterWait = stretches.find((s) => s !== resumed)!;
    // After the wait, the run goes on under the stretch that took it over (exported), not the lost one.
    expect(afterWait.parentSpanId).toBe(resumed.spanId);
    await eventually(() => collector.spans.some((s) => s.name === 'execute_tool write_file'));

    const trace = collector.spans.filter((s) => s.traceId === resumed.traceId);
    const exported = new Set(trace.map((s) => s.spanId));
    for (const span of trace) expect(span.parentSpanId === '' || exported.has(span.parentSpanId)).toBe(true);
    // The killed process's span is the one the replica's stretch continues: linked, in the same trace.
    expect(resumed.parentSpanId).toBe('');
    expect(resumed.links).toHaveLength(1);
    expect(resumed.links![0].traceId).toBe(resumed.traceId);
    expect(exported.has(resumed.links![0].spanId)).toBe(false);
  }, 60_000);
});
