import { startApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { FakeUpstream, text } from '../support/fake-upstream';
import { OtlpReceiver } from '../support/otlp-receiver';
import { openStream } from '../support/sse-client';

/** A run's span names its session's end user (`enduser.id`, "Budgets and usage"); a run without one, none. */
describe('enduser.id on the run span (e2e)', () => {
  let upstream: FakeUpstream;
  let collector: OtlpReceiver;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    collector = await OtlpReceiver.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
  });
  afterAll(async () => {
    await app?.close();
    await collector?.close();
    await upstream?.close();
  });

  async function runSpan(headers: Record<string, string>) {
    upstream.enqueue(text('Hi.'));
    const events = await (
      await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Hello' }, headers })
    ).rest();
    const runId = events[0].data.runId as string;
    const mine = () =>
      collector.named('invoke_agent').filter((s) => s.attributes['loopwright.run.id'] === runId);
    await eventually(() => mine().length > 0);
    return mine()[0];
  }

  it("carries the session's end user, and nothing for a run without one", async () => {
    expect((await runSpan({ 'x-end-user': 'ann@example.com' })).attributes['enduser.id']).toBe(
      'ann@example.com',
    );
    expect((await runSpan({})).attributes['enduser.id']).toBeUndefined();
  });
});
