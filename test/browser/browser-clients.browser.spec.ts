import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { startApp, type TestApp } from '../support/app';
import { CHROMIUM_PATH, launchChromium, type TestBrowser } from '../support/browser';
import { FakeUpstream, text } from '../support/fake-upstream';

const KEY = 'secret-of-a-frontend';

const describeInBrowser = CHROMIUM_PATH === undefined ? describe.skip : describe;
if (CHROMIUM_PATH === undefined) {
  console.warn('browser client tests skipped: no Chromium at /usr/bin/chromium (apt-get install chromium)');
}

/**
 * The README's "From a browser" snippets, run by Chromium on a page of another origin allowed by
 * CORS_ORIGINS: fetch streaming with an Idempotency-Key and the exposed X-Run-Id, then the browser's
 * own EventSource on a stream token, which stops on the server's 204.
 */
describeInBrowser('a browser on another origin (e2e, Chromium)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  let site: Server;
  let siteUrl: string;
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    site = createServer((_req, res) => res.end('<!doctype html><title>a frontend</title>'));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      API_KEYS: `frontend:${KEY}`,
      CORS_ORIGINS: siteUrl,
    });
    browser = await launchChromium(CHROMIUM_PATH!);
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${siteUrl}/`);
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await upstream?.close();
    await new Promise((resolve) => site?.close(resolve));
  });

  it('streams a POST with fetch, reads X-Run-Id, then follows the run with EventSource and a stream token', async () => {
    upstream.enqueue(text('hello from the model', { delayMs: 20 }));
    const result = await page.evaluate(
      async ({ api, key }) => {
        const res = await fetch(`${api}/v1/chat`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${key}`,
            'Content-Type': 'application/json',
            'Idempotency-Key': crypto.randomUUID(),
          },
          body: JSON.stringify({ prompt: 'Say hello.', tools: [] }),
        });
        const runId = res.headers.get('X-Run-Id');
        const fetched: string[] = [];
        const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (let r = await reader.read(); !r.done; r = await reader.read()) {
          buffer += r.value;
          const frames = buffer.split('\n\n');
          buffer = frames.pop()!;
          for (const frame of frames) {
            const data = frame.split('\n').find((line) => line.startsWith('data: '));
            if (data) fetched.push((JSON.parse(data.slice(6)) as { type: string }).type);
          }
        }

        const tokenAnswer = await fetch(`${api}/v1/runs/${runId}/stream-token`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}` },
        });
        const { token } = (await tokenAnswer.json()) as { token: string };
        const followed: string[] = [];
        let text = '';
        let requests = 0;
        await new Promise<void>((done) => {
          const source = new EventSource(`${api}/v1/runs/${runId}/events?token=${token}`);
          source.addEventListener('open', () => requests++);
          for (const type of ['run_started', 'text', 'step_finished', 'done']) {
            source.addEventListener(type, (e) => {
              followed.push(type);
              if (type === 'text')
                text += (JSON.parse((e as MessageEvent).data as string) as { delta: string }).delta;
            });
          }
          // After `done` the stream ends; the reconnect gets the 204 and EventSource closes for good.
          source.addEventListener('error', () => {
            if (source.readyState === EventSource.CLOSED) done();
          });
        });
        return { runId, fetched, followed, text, requests, tokenStatus: tokenAnswer.status };
      },
      { api: app.url, key: KEY },
    );

    expect(result.runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.fetched[0]).toBe('run_started');
    expect(result.fetched.at(-1)).toBe('done');
    expect(result.tokenStatus).toBe(201);
    expect(result.followed).toEqual(result.fetched);
    expect(result.text).toBe('hello from the model');
    expect(result.requests).toBe(1);
  }, 30_000);
});
