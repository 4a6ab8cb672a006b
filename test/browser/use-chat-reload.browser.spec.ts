import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { UIMessage } from 'ai' with { 'resolution-mode': 'import' };
import type { Page } from 'playwright-core';
import { startApp, type TestApp } from '../support/app';
import { CHROMIUM_PATH, launchChromium, type TestBrowser } from '../support/browser';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';

const KEY = 'secret-of-a-frontend';

const describeInBrowser = CHROMIUM_PATH === undefined ? describe.skip : describe;

interface ChatPage {
  status: string;
  messages: UIMessage[];
}

/**
 * The README's useChat snippet after a reload, in Chromium: the stored conversation loaded with
 * GET /v1/ai-sdk/chat/:chatId/messages into the real useChat, which shows the pending approval
 * and continues the run once it is given.
 */
describeInBrowser('useChat after a reload (e2e, Chromium)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  let site: Server;
  let siteUrl: string;
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    const bundle = await build({
      entryPoints: [join(__dirname, 'use-chat-page.mjs')],
      bundle: true,
      write: false,
      format: 'esm',
      target: 'es2022',
      define: { 'process.env.NODE_ENV': '"production"' },
      logLevel: 'warning',
    });
    const script = bundle.outputFiles[0].text;
    site = createServer((req, res) => {
      if (req.url === '/page.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' });
        res.end(script);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><div id="root"></div><script type="module" src="/page.js"></script>');
    });
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
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await upstream?.close();
    await new Promise((resolve) => site?.close(resolve));
  });

  it('loads the stored conversation into useChat({ messages }), which shows the waiting approval and continues the run', async () => {
    upstream.enqueue(
      toolCalls([
        { id: 'call_reload', name: 'write_file', arguments: { path: 'reload.txt', content: 'after reload' } },
      ]),
      text('Written after the reload.'),
    );
    // The first page: a useChat request whose run waits for an approval; then the page is gone.
    const first = await fetch(`${app.url}/v1/ai-sdk/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'chat-reloaded',
        trigger: 'submit-message',
        messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Write reload.txt' }] }],
      }),
    });
    await first.text();

    const query = new URLSearchParams({ api: app.url, key: KEY, chat: 'chat-reloaded' });
    await page.goto(`${siteUrl}/?${query.toString()}`);
    await page.waitForFunction('window.chatPage !== undefined');
    const loaded = await page.evaluate<ChatPage>('window.chatPage');
    expect(loaded.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(loaded.messages[0].parts).toEqual([{ type: 'text', text: 'Write reload.txt' }]);
    expect(loaded.messages[1].parts.find((p) => p.type === 'dynamic-tool')).toMatchObject({
      state: 'approval-requested',
      toolName: 'write_file',
      approval: { id: 'call_reload' },
    });

    // Approved in the reloaded page: useChat sends it, and the same run goes on to its answer.
    await page.evaluate("window.chatPage.approve('call_reload')");
    await page.waitForFunction(
      "window.chatPage.status === 'ready' && window.chatPage.messages.at(-1).parts.some((p) => p.type === 'text' && p.text === 'Written after the reload.')",
    );
    const after = await page.evaluate<ChatPage>('window.chatPage');
    expect(after.messages).toHaveLength(2);
    expect(after.messages[1].id).toBe(loaded.messages[1].id);
    expect(after.messages[1].parts.find((p) => p.type === 'dynamic-tool')).toMatchObject({
      state: 'output-available',
    });
  }, 30_000);
});
