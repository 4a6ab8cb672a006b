import { EventSource } from 'eventsource';
import { startApp, type TestApp } from '../support/app';
import { FakeUpstream, text } from '../support/fake-upstream';
import { openStream } from '../support/sse-client';

/**
 * A real EventSource client (the `eventsource` package, as a browser's behaves) on a run's events:
 * every event once, then, when the run has ended and the client has its last event, the server's
 * 204 makes it stop instead of reconnecting for ever.
 */
describe('EventSource on GET /v1/runs/:id/events (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('gets every event once, reconnects with Last-Event-ID, and stops on the 204', async () => {
    upstream.enqueue(text('one two three four'));
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Count.', tools: [] } });
    const runId = stream.headers.get('x-run-id')!;
    const all = await stream.rest();

    let requests = 0;
    const seen: number[] = [];
    const source = new EventSource(`${app.url}/v1/runs/${runId}/events`, {
      fetch: (input, init) => {
        requests++;
        return fetch(input, init);
      },
    });
    const closed = new Promise<void>((done) => {
      // The contract's `error` event and EventSource's own share a name: ours carries data.
      source.addEventListener('error', () => {
        if (source.readyState === EventSource.CLOSED) done();
      });
    });
    for (const type of ['run_started', 'text', 'step_finished', 'done']) {
      source.addEventListener(type, (e) => seen.push(Number(e.lastEventId)));
    }
    await closed;
    source.close();

    expect(seen).toEqual(all.map((e) => Number(e.id)));
    // The first request streamed everything; the reconnect after the end got the 204 and was the last.
    expect(requests).toBe(2);
  });
});
