import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { PLAYGROUND_DIR } from '../../src/playground/playground-files';
import { startApp, type TestApp } from '../support/app';
import { CHROMIUM_PATH, launchChromium, type TestBrowser } from '../support/browser';
import { FakeUpstream, text } from '../support/fake-upstream';
import { api } from '../support/sse-client';

const KEY = 'secret-of-alice';
const describeInBrowser = CHROMIUM_PATH === undefined ? describe.skip : describe;

/** The page with issue 42: a prompt sent while a run is active waits under it; the key's schedules. */
describeInBrowser('the playground: queued prompts and schedules (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    if (!existsSync(join(PLAYGROUND_DIR, 'index.html'))) {
      throw new Error(`the page is not built (${PLAYGROUND_DIR}): run npm run build first`);
    }
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, API_KEYS: `alice:${KEY}` });
    browser = await launchChromium(CHROMIUM_PATH!);
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await upstream?.close();
  });
  beforeEach(async () => {
    upstream.reset();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${app.url}/`);
    await page.getByLabel('API key').fill(KEY);
  });
  afterEach(async () => {
    await page.close();
  });

  it('shows a prompt sent during a run as queued under it, then its answer once it ran', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((done) => (release = done));
    let first = true;
    upstream.beforeAnswer = async () => {
      if (!first) return;
      first = false;
      await held;
    };
    upstream.enqueue(text('The first answer.'), text('The second answer.'));
    await page.getByLabel('Message').fill('First.');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForSelector('.status[data-status="streaming"]');

    await page.getByLabel('Message').fill('Second.');
    await page.getByRole('button', { name: 'Send' }).click();
    const queued = page.locator('.thinking.queued');
    await queued.waitFor();
    await expect(queued.textContent()).resolves.toContain('1 in line');
    // Under the running one: the prompts in the order sent.
    const prompts = await page.locator('.message.user .text').allTextContents();
    expect(prompts).toEqual(['First.', 'Second.']);

    release();
    await page.getByText('The second answer.').waitFor();
    expect(await queued.count()).toBe(0);
    await page.waitForSelector('.status[data-status="ready"]');
  });

  it("lists the key's schedules, read-only", async () => {
    const created = await api(
      app.url,
      'POST',
      '/v1/schedules',
      { cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', prompt: 'Triage the new issues.' },
      { authorization: `Bearer ${KEY}` },
    );
    expect(created.status).toBe(201);
    await page.reload();
    const panel = page.getByRole('region', { name: 'Schedules' });
    await panel.getByText('0 9 * * 1-5').waitFor();
    await expect(panel.textContent()).resolves.toContain('Triage the new issues.');
    await expect(panel.textContent()).resolves.toContain('Europe/Berlin');
  });
});
