import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { PLAYGROUND_DIR } from '../../src/playground/playground-files';
import { startApp, type TestApp } from '../support/app';
import { CHROMIUM_PATH, launchChromium, type TestBrowser } from '../support/browser';
import { FakeUpstream, text } from '../support/fake-upstream';
import { api } from '../support/sse-client';

const KEY = 'secret-of-cem';

const describeInBrowser = CHROMIUM_PATH === undefined ? describe.skip : describe;
if (CHROMIUM_PATH === undefined) {
  console.warn(
    'playground output tests skipped: no Chromium at /usr/bin/chromium (apt-get install chromium)',
  );
}

/** The page shows a structured run's done.output as formatted JSON, as text ("Structured output"). */
describeInBrowser('the playground shows done.output (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    if (!existsSync(join(PLAYGROUND_DIR, 'index.html'))) {
      throw new Error(`the page is not built (${PLAYGROUND_DIR}): run npm run build first`);
    }
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, API_KEYS: `cem:${KEY}` });
    browser = await launchChromium(CHROMIUM_PATH!);
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await upstream?.close();
  });

  it('under the answer, indented, markup in it shown as text', async () => {
    const output = { verdict: '<b>ship</b>', files: ['a.ts'] };
    const created = await api(
      app.url,
      'POST',
      '/v1/sessions',
      {
        title: 'Structured review',
        responseFormat: {
          type: 'json_schema',
          schema: { type: 'object', properties: { verdict: { type: 'string' } }, required: ['verdict'] },
        },
      },
      { authorization: `Bearer ${KEY}` },
    );
    expect(created.status).toBe(201);
    upstream.enqueue(text(JSON.stringify(output)));

    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${app.url}/`);
    await page.getByLabel('API key').fill(KEY);
    await page
      .getByRole('list', { name: 'Sessions' })
      .getByRole('button', { name: /Structured review/ })
      .click();
    await page.getByLabel('Message').fill('Review it.');
    await page.getByRole('button', { name: 'Send' }).click();

    const shown = page.getByLabel('Structured output');
    await shown.waitFor();
    expect(await shown.textContent()).toBe(JSON.stringify(output, null, 2));
    expect(await page.locator('.run-output b').count()).toBe(0);
    await page.close();
  });
});
