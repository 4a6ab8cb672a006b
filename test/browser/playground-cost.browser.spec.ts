import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { PLAYGROUND_DIR } from '../../src/playground/playground-files';
import { startApp, type TestApp } from '../support/app';
import { CHROMIUM_PATH, launchChromium, type TestBrowser } from '../support/browser';
import { FakeUpstream, text } from '../support/fake-upstream';

const KEY = 'secret-of-alice';
const describeInBrowser = CHROMIUM_PATH === undefined ? describe.skip : describe;

/** The page shows what a run cost in dollars ("Budgets and usage"), beside its tokens. */
describeInBrowser("the playground shows a run's cost (e2e)", () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    if (!existsSync(join(PLAYGROUND_DIR, 'index.html'))) {
      throw new Error(`the page is not built (${PLAYGROUND_DIR}): run npm run build first`);
    }
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      API_KEYS: `alice:${KEY}`,
      LLM_MODEL: 'test-model',
      // 100 USD per million tokens: 4,200 tokens are 0.42 USD.
      MODEL_PRICES: JSON.stringify({ 'openai/test-model': { input: 100, output: 100 } }),
    });
    browser = await launchChromium(CHROMIUM_PATH!);
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await upstream?.close();
  });

  it('ends a finished run with its tokens and its cost in dollars', async () => {
    upstream.enqueue(text('Priced.', { usage: { promptTokens: 3000, completionTokens: 1200 } }));
    await page.goto(`${app.url}/`);
    await page.getByLabel('API key').fill(KEY);
    await page.getByLabel('Message').fill('What does this cost?');
    await page.getByRole('button', { name: 'Send' }).click();
    const footer = page.locator('.run-status').last();
    await footer.waitFor();
    await expect(footer.textContent()).resolves.toMatch(/3000 \+ 1200 tokens · \$0\.42/);
  });
});
