import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { PLAYGROUND_DIR } from '../../src/playground/playground-files';
import { png } from '../support/attachments';
import { startApp, type TestApp } from '../support/app';
import { CHROMIUM_PATH, launchChromium, type TestBrowser } from '../support/browser';
import { FakeUpstream, text } from '../support/fake-upstream';

const KEY = 'secret-of-alice';
const PNG = png(5, 5, [0, 120, 255]);

const describeInBrowser = CHROMIUM_PATH === undefined ? describe.skip : describe;

describeInBrowser('the playground attaches a file (Chromium, e2e)', () => {
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
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${app.url}/`);
    await page.getByLabel('API key').fill(KEY);
  });
  afterAll(async () => {
    await page?.close();
    await browser?.close();
    await app?.close();
    await upstream?.close();
  });

  it('uploads a PNG through Attach, shows it in the conversation and sends it to the model as an image', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopwright-attach-'));
    const file = join(dir, 'blue.png');
    writeFileSync(file, PNG);
    upstream.enqueue(text('A small blue square.'));

    const chooser = page.waitForEvent('filechooser');
    await page.getByRole('button', { name: 'Attach' }).click();
    await (await chooser).setFiles(file);
    await page.getByRole('list', { name: 'Attachments' }).getByText('blue.png').waitFor();
    await page.getByLabel('Message').fill('What is this?');
    await page.getByRole('button', { name: 'Send' }).click();

    await page.getByText('A small blue square.').waitFor();
    await page.locator('.message.user .attachment', { hasText: 'blue.png' }).waitFor();
    const user = upstream.requests[0].body.messages.find((m) => m.role === 'user');
    expect(user?.content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
    ]);
  });
});
